#!/usr/bin/env python3
"""Docs.KeptTrue: README.md and docs/ say what the tree and the binaries are.

    python3 tests/docs/check_docs.py SOURCE_DIR BINARY_DIR

Rules (each failure names its rule and what broke it):
  readme-size    README.md is at most 10,000 characters (a five-minute read);
  no-outside     no file of README.md or docs/ mentions ../shared or DESIGN.md
                 (the docs cite only the repository);
  links          every relative markdown link in README.md and docs/*.md
                 names a file or folder inside the repository, and a
                 #fragment into a markdown file names one of its headings;
  design-map     every top-level source folder with a CMakeLists.txt is named
                 in docs/design.md;
  flags          every long flag a binary's --help prints appears in
                 docs/flags.md (regenerate it: tests/docs/make_flags_md.py).
                 Binaries not built (BINARY_DIR/bin/<name> absent) are skipped;
  cuda-archs     the `--version` example in README.md and docs/building.md names
                 the default CUDA architectures (cmake/DgcnCuda.cmake, as
                 BINARY_DIR/cuda-architectures.txt describes them), and in a
                 CUDA build `dgcn-train --version` names what this configure
                 chose (Note [CUDA architectures]).
"""
import os
import re
import subprocess
import sys

README_LIMIT = 10000
FORBIDDEN = ["../shared", "DESIGN.md"]
FLAG_BINARIES = ["dgcn-train", "dgcn-predict", "dgcn-mnist", "dgcn-sampler-bench", "dgcn-spmm-bench",
                 "dgcn-ddp-bench"]
FLAG = re.compile(r"--[a-z][a-z0-9-]+")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")

failures = []


def fail(rule, what):
    failures.append("%s: %s" % (rule, what))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def doc_files(src):
    files = [os.path.join(src, "README.md")]
    for root, _, names in os.walk(os.path.join(src, "docs")):
        files += [os.path.join(root, n) for n in sorted(names)]
    return files


def without_code(text):
    """The text with fenced blocks and code spans blanked: links there are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def check_readme_size(src):
    n = len(read(os.path.join(src, "README.md")))
    if n > README_LIMIT:
        fail("readme-size", "README.md has %d characters, more than %d" % (n, README_LIMIT))


def check_no_outside(src):
    for path in doc_files(src):
        try:
            text = read(path)
        except UnicodeDecodeError:
            continue
        for word in FORBIDDEN:
            for m in re.finditer(re.escape(word), text):
                line = text.count("\n", 0, m.start()) + 1
                fail("no-outside", "%s:%d mentions %s" % (os.path.relpath(path, src), line, word))


def anchors(path):
    """The anchors GitHub gives the headings of a markdown file."""
    seen, out = {}, set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.sub(r"^```.*?^```", "", read(path), flags=re.S | re.M),
                         flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def check_links(src):
    root = os.path.realpath(src)
    for path in doc_files(src):
        if not path.endswith(".md"):
            continue
        for m in LINK.finditer(without_code(read(path))):
            target = shown = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # a URL
            if target.startswith("#"):
                target = os.path.basename(path) + target  # an anchor on the same page
            file_part, _, fragment = target.partition("#")
            resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part))
            where = os.path.relpath(path, src)
            if not (resolved == root or resolved.startswith(root + os.sep)):
                fail("links", "%s links %s, outside the repository" % (where, shown))
            elif not os.path.exists(resolved):
                fail("links", "%s links %s, which does not exist" % (where, shown))
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                fail("links", "%s links %s, but %s has no heading #%s" %
                     (where, shown, os.path.relpath(resolved, src), fragment))


def check_design_map(src):
    design = read(os.path.join(src, "docs", "design.md"))
    for name in sorted(os.listdir(src)):
        if name.startswith((".", "build")) or name == "shared":
            continue
        if not os.path.isfile(os.path.join(src, name, "CMakeLists.txt")):
            continue
        if not re.search(r"(?<![A-Za-z0-9_./-])%s/" % re.escape(name), design):
            fail("design-map", "docs/design.md does not name the folder %s/" % name)


def check_flags(src, bindir):
    flags_md = read(os.path.join(src, "docs", "flags.md"))
    for name in FLAG_BINARIES:
        binary = os.path.join(bindir, "bin", name)
        if not os.path.exists(binary):
            print("check_docs: %s not built; its flags are not checked" % name)
            continue
        try:
            out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            fail("flags", "%s --help did not run: %s" % (name, e))
            continue
        if out.returncode != 0:
            fail("flags", "%s --help exited %d: %s" % (name, out.returncode, out.stderr.strip()[-500:]))
            continue
        for flag in sorted(set(FLAG.findall(out.stdout))):
            if not re.search(re.escape(flag) + r"(?![a-z0-9-])", flags_md):
                fail("flags", "%s --help prints %s, which docs/flags.md lacks "
                     "(regenerate: tests/docs/make_flags_md.py %s/bin > docs/flags.md)" % (name, flag, bindir))


VERSION_ARCHS = re.compile(r"^CUDA [0-9.]+ for ([^:]+):", re.M)


def check_cuda_archs(src, bindir):
    facts_path = os.path.join(bindir, "cuda-architectures.txt")
    if not os.path.isfile(facts_path):
        fail("cuda-archs", "%s is missing (configure writes it)" % facts_path)
        return
    facts = dict(line.split("=", 1) for line in read(facts_path).splitlines() if "=" in line)
    for doc in ["README.md", os.path.join("docs", "building.md")]:
        named = VERSION_ARCHS.findall(read(os.path.join(src, doc)))
        if not named:
            fail("cuda-archs", "%s shows no `CUDA ... for ARCHS:` line of --version" % doc)
        for archs in named:
            if archs != facts["default"]:
                fail("cuda-archs", "%s says the build targets '%s'; the default is '%s'"
                     % (doc, archs, facts["default"]))
    binary = os.path.join(bindir, "bin", "dgcn-train")
    if facts.get("configured") and os.path.exists(binary):
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=120).stdout
        said = VERSION_ARCHS.findall(out)
        if said != [facts["configured"]]:
            fail("cuda-archs", "dgcn-train --version says %s; this configure chose '%s'"
                 % (said or "no architectures", facts["configured"]))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_docs.py SOURCE_DIR BINARY_DIR")
    src, bindir = sys.argv[1], sys.argv[2]
    for path in [os.path.join(src, "README.md"), os.path.join(src, "docs", "design.md"),
                 os.path.join(src, "docs", "flags.md")]:
        if not os.path.isfile(path):
            fail("files", "%s is missing" % os.path.relpath(path, src))
    if not failures:
        check_readme_size(src)
        check_no_outside(src)
        check_links(src)
        check_design_map(src)
        check_flags(src, bindir)
        check_cuda_archs(src, bindir)
    for f in failures:
        print("check_docs: " + f, file=sys.stderr)
    if failures:
        print("check_docs: %d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("check_docs: README.md and docs/ are kept true")
    return 0


if __name__ == "__main__":
    sys.exit(main())
