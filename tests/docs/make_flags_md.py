#!/usr/bin/env python3
"""Writes docs/flags.md from the binaries' --help output.

    python3 tests/docs/make_flags_md.py BINDIR > docs/flags.md

BINDIR holds the built binaries (build/bin). Run it after a flag changes;
Docs.KeptTrue (tests/docs/check_docs.py) fails while a flag that --help
prints is missing from docs/flags.md.
"""
import os
import re
import subprocess
import sys

BINARIES = [
    ("dgcn-train", "train a GCN, GraphSAGE or GAT (the main job)"),
    ("dgcn-predict", "predictions and embeddings of a checkpoint"),
    ("dgcn-prep", "build and inspect `.gcn` stores, partition them"),
    ("dgcn-mnist", "the DDP baseline"),
    ("dgcn-sampler-bench", "the neighbour sampler's speed"),
    ("dgcn-spmm-bench", "the SpMM kernel against memory bandwidth"),
    ("dgcn-ddp-bench", "the cost of gradient sync"),
]

PREAMBLE = """\
# Flags of every binary

`<binary> --help` is authoritative; this page is generated from it by
[tests/docs/make_flags_md.py](../tests/docs/make_flags_md.py), and
`Docs.KeptTrue` fails when a flag is missing here.

Every binary has `--version` and `--help` (defaults shown as `NAME=value`);
a usage error (a bad flag or value) exits with status 2 naming the flag and
what it accepts, an error of the data or the run with status 1. The same
things have the same names: `--batch-size`, `--num-neighbors 15,10,5` (each
entry an integer >= -1; `15,,5` and `''` are errors), `--device
cpu|cuda|cuda:N`; a flag given twice counts once, the last time. Results are
JSON on stdout, logs on stderr. The launcher flags (`--nproc-per-node`,
`--nnodes`, `--node-rank`, `--master-addr`, `--master-port`, `--timeout`,
`--max-restarts`) are explained in [distributed.md](distributed.md).

"""


COLUMN = 30  # CLI11's default column width of --help


def run_help(path, args):
    out = subprocess.run([path, *args, "--help"], capture_output=True, text=True, timeout=60)
    return out.stdout + out.stderr


def cell(text):
    return text.replace("|", "\\|")


def prose(text):
    """Help text as markdown: angle brackets and pipes shown, not taken as HTML or cells."""
    return cell(text.replace("<", "&lt;").replace(">", "&gt;"))


def parse(text):
    """(description, usage, sections: [(title, [(spec, description)])], subcommands)"""
    lines = text.splitlines()
    desc, usage, sections, subs = [], "", [], []
    current = None
    for i, line in enumerate(lines):
        if line.startswith("Usage:"):
            usage = line[len("Usage:"):].strip()
            continue
        if re.match(r"^[A-Z][A-Za-z]*:$", line):
            current = (line[:-1], [])
            sections.append(current)
            continue
        if current is None:
            if line.strip():
                desc.append(line.strip())
            continue
        if not line.strip():
            continue
        if line.startswith("  ") and not line.startswith("   "):
            # CLI11 pads the flag's spec to column 30 and starts its meaning
            # there; a longer spec gets the meaning on the next line instead.
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if following.startswith(" " * COLUMN) or len(line) <= COLUMN:
                current[1].append([line.strip(), ""])
            else:
                current[1].append([line[:COLUMN].strip(), line[COLUMN:].strip()])
        elif current[1]:
            current[1][-1][1] = (current[1][-1][1] + " " + line.strip()).strip()
    for title, rows in sections:
        if title == "Subcommands":
            subs = [r[0] for r in rows]
    return " ".join(desc), usage, sections, subs


def table(rows):
    out = ["| flag | value | meaning |", "| --- | --- | --- |"]
    for spec, meaning in rows:
        names, _, value = spec.partition(" ")
        value = value.strip()
        out.append("| `%s` | %s | %s |" % (cell(names), "`%s`" % cell(value) if value else "",
                                          prose(meaning)))
    return out


def section(name, text, level):
    desc, usage, sections, _ = parse(text)
    usage = re.sub(r"^\S*/", "", usage)  # the binary's name, not where it was run from
    out = ["#" * level + " " + name, "", prose(desc), "", "Usage: `%s`" % usage, ""]
    for title, rows in sections:
        if title == "Subcommands":
            out += ["Subcommands:", ""]
            out += ["- [`%s`](#%s): %s" % (r[0], anchor(name + " " + r[0]), prose(r[1])) for r in rows]
            out.append("")
        elif title == "Positionals":
            out += ["Positionals: " + "; ".join("`%s` %s" % (r[0], prose(r[1])) for r in rows), ""]
        else:
            out += table(rows) + [""]
    return out


def anchor(title):
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def main():
    bindir = sys.argv[1]
    out = [PREAMBLE.rstrip("\n"), ""]
    out += ["| binary | what |", "| --- | --- |"]
    out += ["| [`%s`](#%s) | %s |" % (b, b, what) for b, what in BINARIES]
    out.append("")
    for name, _ in BINARIES:
        path = os.path.join(bindir, name)
        if not os.path.exists(path):
            sys.exit("make_flags_md: %s not found" % path)
        text = run_help(path, [])
        out += section(name, text, 2)
        for sub in parse(text)[3]:
            out += section(name + " " + sub, run_help(path, [sub]), 3)
    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
