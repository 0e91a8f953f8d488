// `dgcn-prep convert FILE --out F.gcn`: loads a store (checking it in full)
// and writes it again with other output flags, e.g. --raw for a file that
// shared-cache loads map in place, or another --zstd-level.
#include <memory>

#include "apps/prep/prep.h"
#include "graph/store_format.h"

namespace dgcn::prep {

namespace {

struct ConvertOptions {
  std::string file;
  OutputOptions output;
};

}  // namespace

void register_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "re-encode a .gcn store (load, check, write with the output flags below), e.g. all raw with --raw");
  cmd->add_option("file", o->file, "the .gcn file to read")->required();
  add_write_flags(*cmd, o->output);
  cmd->callback([o] {
    LoadOptions load;
    load.threads = o->output.threads;
    write_output(load_store(o->file, load), o->output);
  });
}

}  // namespace dgcn::prep
