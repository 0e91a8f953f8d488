// How an app names, in a library's error message, the flags that fed the
// library's arguments. Library messages name their own arguments
// ("label 7 is not below num_classes 5"); the app knows which flag set each
// one and rewrites the name where it stands as a whole word
// ("... not below --num-classes 5").
#pragma once

#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace dgcn::cli {

using FlagNames = std::initializer_list<std::pair<std::string_view, std::string_view>>;

inline std::string with_flag_names(std::string message, FlagNames names) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const auto& [argument, flag] : names) {
    for (size_t at = message.find(argument); at != std::string::npos; at = message.find(argument, at)) {
      const size_t end = at + argument.size();
      const bool whole =
          (at == 0 || !word_char(message[at - 1])) && (end == message.size() || !word_char(message[end]));
      if (!whole) {
        at = end;
        continue;
      }
      message.replace(at, argument.size(), flag);
      at += flag.size();
    }
  }
  return message;
}

}  // namespace dgcn::cli
