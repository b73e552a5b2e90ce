#include "base/dir_lock.hpp"
#include "base/fs.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>

using bisectd::base::DirLock;

TEST_CASE("base::DirLock admits one holder and names it to the next", "[base]") {
  auto dir = bisectd::base::make_temp_dir("dir-lock-", std::filesystem::temp_directory_path());
  REQUIRE(dir);
  {
    auto first = DirLock::acquire(*dir);
    REQUIRE(first);
    CHECK(bisectd::base::read_file(*dir / "bisectd.lock").value_or("") == std::to_string(::getpid()) + "\n");
    auto second = DirLock::acquire(*dir);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == bisectd::ErrorCode::conflict);
    CHECK(second.error().message == dir->string() + " is in use by another bisectd (pid " + std::to_string(::getpid()) +
                                      ", lock " + (*dir / "bisectd.lock").string() + ")");
  }
  CHECK(DirLock::acquire(*dir)); // released with its holder
  std::filesystem::remove_all(*dir);
}
