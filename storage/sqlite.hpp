#pragma once
// Thin RAII wrapper over one SQLite connection: prepared statements, bound parameters only.

#include "base/error.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace bisectd::storage {

using Value = std::variant<std::nullptr_t, std::int64_t, double, std::string>;

class Statement {
public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  ~Statement();

  Statement& bind(int index, const Value& value); // 1-based
  // Steps once: true when a row is available, false when done. Errors name the SQL.
  Result<bool> step();
  [[nodiscard]] std::int64_t column_int(int column) const;
  [[nodiscard]] double column_double(int column) const;
  [[nodiscard]] std::string column_text(int column) const;
  [[nodiscard]] bool column_is_null(int column) const;

private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt;
};

class Connection {
public:
  // Opens (creating) the file in WAL mode, synchronous=FULL (every commit survives a power cut), with foreign keys
  // on and a busy timeout.
  static Result<std::unique_ptr<Connection>> open(const std::filesystem::path& path);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Result<Statement> prepare(std::string_view sql);
  Status exec(std::string_view sql); // for schema scripts without parameters
  // Runs `sql` with `params`; returns the number of changed rows.
  Result<int> run(std::string_view sql, const std::vector<Value>& params = {});
  [[nodiscard]] std::int64_t last_insert_id() const;

  // All access goes through this lock: one connection shared by the daemon's threads.
  std::recursive_mutex& mutex() { return m_mutex; }

private:
  explicit Connection(sqlite3* db) : m_db(db) {}
  sqlite3* m_db;
  std::recursive_mutex m_mutex;
};

// BEGIN IMMEDIATE .. COMMIT, rolled back unless commit() is called. Holds the connection lock.
class Transaction {
public:
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status begin();
  Status commit();

private:
  Connection& m_connection;
  std::unique_lock<std::recursive_mutex> m_lock;
  bool m_open = false;
};

} // namespace bisectd::storage
