#pragma once
// `bisectctl show ID` (a bisection in detail) and `bisectctl report ID` (its mail).

#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bisectd::cli {

// The human view of GET /api/v1/bisections/ID: header fields, shift, tested commits, verification,
// recent events (`now` in Unix seconds, for ages).
std::string render_bisection(const nlohmann::json& bisection, std::int64_t now);

// The tested-commits table: #, COMMIT, STATUS, N, MEAN, ±STDDEV, SUBJECT.
std::string render_tested(const nlohmann::json& tested);

// Why a finished search named no single commit, in words ("no change beyond the threshold (±2%: ...)", "budget
// spent ..."); "" for a culprit or a search still running.
std::string verdict_text(const nlohmann::json& bisection);

// `report`'s line on stderr when the mail was not (yet) sent: "(not mailed: no recipients: ...)"; "" once sent or
// when the daemon does not say (`mail` of GET /api/v1/bisections/ID/report).
std::string mail_note(const nlohmann::json& mail);

void register_show_commands(CLI::App& app, Context& context, Registry& registry);

} // namespace bisectd::cli
