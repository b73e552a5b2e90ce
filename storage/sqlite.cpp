#include "storage/sqlite.hpp"

#include <sqlite3.h>

namespace bisectd::storage {

namespace {
std::unexpected<Error> sqlite_error(sqlite3* db, std::string_view what) {
  return make_error(ErrorCode::io, "sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db));
}
} // namespace

Statement::Statement(Statement&& other) noexcept : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)) {}

Statement::~Statement() {
  if (m_stmt != nullptr) {
    sqlite3_finalize(m_stmt);
  }
}

Statement& Statement::bind(int index, const Value& value) {
  std::visit(
    [&](const auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::nullptr_t>) {
        sqlite3_bind_null(m_stmt, index);
      } else if constexpr (std::is_same_v<T, std::int64_t>) {
        sqlite3_bind_int64(m_stmt, index, v);
      } else if constexpr (std::is_same_v<T, double>) {
        sqlite3_bind_double(m_stmt, index, v);
      } else {
        sqlite3_bind_text(m_stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
      }
    },
    value);
  return *this;
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  return sqlite_error(m_db, sqlite3_sql(m_stmt));
}

std::int64_t Statement::column_int(int column) const { return sqlite3_column_int64(m_stmt, column); }
double Statement::column_double(int column) const { return sqlite3_column_double(m_stmt, column); }
bool Statement::column_is_null(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(m_stmt, column);
  if (text == nullptr) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
}

Result<std::unique_ptr<Connection>> Connection::open(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(ErrorCode::io, path.string() + ": " + message);
  }
  sqlite3_busy_timeout(db, 10'000);
  std::unique_ptr<Connection> connection(new Connection(db));
  // synchronous=FULL: in WAL mode NORMAL may lose the last commits to a power cut, and the outbox's "sending" and
  // "sent" marks must outlive one (a mail lost or sent twice). FULL is per connection, so the whole DB pays it:
  // one fsync per commit (about 6 ms against 0.08 ms on the test host's disk), for a daemon committing a few
  // times a minute.
  BISECTD_TRY(connection->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"));
  return connection;
}

Connection::~Connection() { sqlite3_close_v2(m_db); }

Result<Statement> Connection::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return sqlite_error(m_db, sql);
  }
  return Statement(m_db, stmt);
}

Status Connection::exec(std::string_view sql) {
  char* message = nullptr;
  std::string text(sql);
  if (sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    return make_error(ErrorCode::io, "sqlite: " + error);
  }
  return {};
}

Result<int> Connection::run(std::string_view sql, const std::vector<Value>& params) {
  std::lock_guard lock(m_mutex);
  BISECTD_TRY_ASSIGN(auto stmt, prepare(sql));
  for (std::size_t i = 0; i < params.size(); ++i) {
    stmt.bind(static_cast<int>(i + 1), params[i]);
  }
  BISECTD_TRY(stmt.step());
  return sqlite3_changes(m_db);
}

std::int64_t Connection::last_insert_id() const { return sqlite3_last_insert_rowid(m_db); }

Transaction::Transaction(Connection& connection) : m_connection(connection), m_lock(connection.mutex()) {}

Transaction::~Transaction() {
  if (m_open) {
    (void)m_connection.exec("ROLLBACK");
  }
}

Status Transaction::begin() {
  BISECTD_TRY(m_connection.exec("BEGIN IMMEDIATE"));
  m_open = true;
  return {};
}

Status Transaction::commit() {
  BISECTD_TRY(m_connection.exec("COMMIT"));
  m_open = false;
  return {};
}

} // namespace bisectd::storage
