// Every commit must outlive a power cut: the outbox's "sending"/"sent" marks decide whether a mail goes out again.
// In WAL mode synchronous=NORMAL may lose the last commits; the connection runs with FULL.
#include "base/fs.hpp"
#include "storage/sqlite.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace bisectd;

TEST_CASE("storage::Connection opens with synchronous=FULL in WAL mode", "[storage][durability]") {
  auto dir = base::make_temp_dir("bisectd-durability-").value();
  {
    auto connection = storage::Connection::open(dir / "bisectd.db").value();
    auto pragma = [&](const char* sql) {
      auto stmt = connection->prepare(sql).value();
      REQUIRE(stmt.step().value());
      return stmt.column_text(0);
    };
    CHECK(pragma("PRAGMA journal_mode") == "wal");
    CHECK(pragma("PRAGMA synchronous") == "2"); // 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA
  }
  std::filesystem::remove_all(dir);
}
