#pragma once
// The build store: one directory per (commit, recipe hash) under a root, e.g. DATA_DIR/builds.
// A build counts as stored only once its small result file has been written (atomically, last), so a
// crash mid-build leaves a directory without a result file, which lookup() ignores and prepare() wipes.
//
// Layout: ROOT/<recipe hash>/<commit>/{result, build.log, artifacts/}

#include "base/error.hpp"
#include "kbuild/builder.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace bisectd::kbuild {

class BuildStore {
public:
  explicit BuildStore(std::filesystem::path root);

  [[nodiscard]] const std::filesystem::path& root() const { return m_root; }

  // The directory of (commit, recipe hash); it may not exist yet.
  [[nodiscard]] std::filesystem::path dir_for(const std::string& commit, const std::string& recipe_hash) const;

  // The stored result (success or build failure), or nullopt when nothing complete is stored.
  // Paths in the result are absolute; `reused` is true and `seconds` is the original build's wall time.
  // A corrupt result file counts as not stored.
  [[nodiscard]] std::optional<BuildResult> lookup(const std::string& commit, const std::string& recipe_hash) const;

  // Empties (or creates) the directory of (commit, recipe hash) for a new build: leftovers of an
  // interrupted build are removed. Returns the directory. Error: invalid commit/hash or I/O.
  Result<std::filesystem::path> prepare(const std::string& commit, const std::string& recipe_hash);

  // Stores `result` by writing the result file last. Infra outcomes are never stored (a no-op), so
  // they are retried. Paths inside the store directory are kept relative to it (the store can move).
  Status save(const std::string& commit, const std::string& recipe_hash, const BuildResult& result);

  // Forgets a stored build failure of (commit, recipe hash) (its result file goes; the next build starts afresh): a
  // failure seen once may have been the machine's. A stored success is kept. Error: invalid key or I/O.
  Status forget_failure(const std::string& commit, const std::string& recipe_hash);

private:
  std::filesystem::path m_root;
};

} // namespace bisectd::kbuild
