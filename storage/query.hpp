#pragma once
// Internal helper: run a SELECT with bound parameters and map each row.

#include "storage/sqlite.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bisectd::storage {

template <class Row>
Result<std::vector<Row>> query(Connection& connection, std::string_view sql, const std::vector<Value>& params,
                               const std::function<Row(const Statement&)>& read) {
  std::lock_guard lock(connection.mutex());
  BISECTD_TRY_ASSIGN(auto stmt, connection.prepare(sql));
  for (std::size_t i = 0; i < params.size(); ++i) {
    stmt.bind(static_cast<int>(i + 1), params[i]);
  }
  std::vector<Row> rows;
  while (true) {
    BISECTD_TRY_ASSIGN(bool has_row, stmt.step());
    if (!has_row) {
      return rows;
    }
    rows.push_back(read(stmt));
  }
}

template <class Row>
Result<std::optional<Row>> query_one(Connection& connection, std::string_view sql, const std::vector<Value>& params,
                                     const std::function<Row(const Statement&)>& read) {
  BISECTD_TRY_ASSIGN(auto rows, query<Row>(connection, sql, params, read));
  if (rows.empty()) {
    return std::optional<Row>{};
  }
  return std::optional<Row>(std::move(rows.front()));
}

inline Value text(const std::string& s) { return Value(s); }
inline Value integer(std::int64_t v) { return Value(v); }
inline Value nullable_id(std::int64_t v) { return v == 0 ? Value(nullptr) : Value(v); }
inline Value name_value(std::string_view name) { return Value(std::string(name)); } // a state's to_string

} // namespace bisectd::storage
