// Recipe::hash: the build-store key part that says "same recipe, same output".
// Every field is written length-prefixed, so ("ab","c") and ("a","bc") never hash alike. The timeout is
// left out on purpose: it changes whether a build finishes, not what it produces.

#include "base/fs.hpp"
#include "base/hash.hpp"
#include "kbuild/builder.hpp"

namespace bisectd::kbuild {

namespace {

// Bump when the meaning of the hashed fields changes, so old store entries are not reused.
constexpr std::string_view k_hash_version = "bisectd-recipe-v1";

class HashInput {
public:
  void add(std::string_view field, std::string_view value) {
    m_text += field;
    m_text += '=';
    m_text += std::to_string(value.size());
    m_text += ':';
    m_text += value;
    m_text += '\n';
  }
  void add_list(std::string_view field, const std::vector<std::string>& values) {
    add(field, std::to_string(values.size()));
    for (const auto& value : values) {
      add(field, value);
    }
  }
  [[nodiscard]] const std::string& text() const { return m_text; }

private:
  std::string m_text;
};

std::string_view kind_name(RecipeKind kind) { return kind == RecipeKind::kernel ? "kernel" : "command"; }

// The content of a file the recipe names; its path alone says nothing about the output.
Result<std::string> file_content(std::string_view field, const std::filesystem::path& path) {
  auto content = base::read_file(path);
  if (!content) {
    return make_error(ErrorCode::invalid_config,
                      "build." + std::string(field) + ": cannot read " + content.error().message);
  }
  return content;
}

} // namespace

Result<std::string> Recipe::hash() const {
  HashInput in;
  in.add("version", k_hash_version);
  in.add("kind", kind_name(kind));
  in.add_list("command", command);
  in.add_list("artifacts", artifacts);
  in.add("env", std::to_string(env.size()));
  for (const auto& [name, value] : env) {
    in.add("env.name", name);
    in.add("env.value", value);
  }
  in.add("config", config);
  // An absolute config is a file (not a make target): its content is what matters.
  if (!config.empty() && config.front() == '/') {
    BISECTD_TRY_ASSIGN(auto content, file_content("config", config));
    in.add("config.content", content);
  }
  in.add("fragment", fragment.empty() ? "" : "present");
  if (!fragment.empty()) {
    BISECTD_TRY_ASSIGN(auto content, file_content("fragment", fragment));
    in.add("fragment.content", content);
  }
  in.add_list("extra_options", extra_options);
  in.add("kcflags", kcflags);
  in.add("arch", arch);
  in.add("modules", modules ? "y" : "n");
  return base::hash_hex(in.text());
}

} // namespace bisectd::kbuild
