// GET the logs of a request: its runs, its console, its build. Read in slices from an offset (a client follows a
// running visit by asking again from next_offset), never whole into memory.
#include "daemon/api/resources.hpp"
#include "daemon/core/requests.hpp"

#include <algorithm>
#include <fstream>

namespace bisectd::daemon::api {

using nlohmann::json;

namespace {

constexpr std::size_t k_slice_bytes = 256 * 1024;

// The files of one log kind, in name order.
std::vector<std::filesystem::path> log_files(const std::filesystem::path& dir, bool console) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    bool is_console = it->path().filename().string().ends_with("-console.log");
    if (it->is_regular_file() && is_console == console) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Up to k_slice_bytes of the files' concatenation from `offset`; each file is announced by a "==> name <==" line.
json read_slice(const std::vector<std::filesystem::path>& files, std::uint64_t offset) {
  std::string text;
  std::uint64_t position = 0;
  for (const auto& file : files) {
    std::string header = "==> " + file.filename().string() + " <==\n";
    std::error_code ec;
    auto size = std::filesystem::file_size(file, ec);
    auto part_size = header.size() + (ec ? 0 : size);
    if (offset < position + part_size && text.size() < k_slice_bytes) {
      auto from = offset > position ? offset - position : 0;
      if (from < header.size()) {
        text += header.substr(from);
        from = header.size();
      }
      auto wanted = std::min<std::uint64_t>(part_size - from, k_slice_bytes - std::min(text.size(), k_slice_bytes));
      std::ifstream in(file, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(from - header.size()));
      std::string part(wanted, '\0');
      in.read(part.data(), static_cast<std::streamsize>(wanted));
      part.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
      text += part;
    }
    position += part_size;
  }
  return json{{"offset", offset}, {"next_offset", offset + text.size()}, {"text", text}};
}

// ?offset= in bytes (0 when absent).
Result<std::uint64_t> offset_of(const Call& call) {
  try {
    return std::stoull(call.query_or("offset", "0"));
  } catch (const std::exception&) {
    return make_error(ErrorCode::invalid_input, "offset: must be a number of bytes");
  }
}

} // namespace

HttpResponse get_log(ApiContext& c, const Call& call) {
  const auto& kind = call.params.at("kind");
  auto id = std::stoll(call.params.at("id"));
  auto request = c.queue.request(id);
  if (!request || !*request) {
    return error_response(404, "request " + std::to_string(id) + " not found");
  }
  std::vector<std::filesystem::path> files;
  std::string where;
  if (kind == "request" || kind == "console") {
    auto dir = request_log_dir(c.data_dir, id);
    files = log_files(dir, kind == "console");
    where = dir.string();
  } else if (kind == "build") {
    const auto& r = **request;
    auto build = c.samples.last_build(r.job, r.commit, r.variant);
    if (build && !*build && !r.variant.empty()) {
      // A variant that only labels its samples (the bad head measured beside its revert) uses the plain build.
      build = c.samples.last_build(r.job, r.commit, "");
    }
    if (build && *build && !(*build)->log_path.empty()) {
      files.push_back((*build)->log_path);
      where = (*build)->log_path;
    }
  } else {
    return error_response(404, "no such log kind '" + kind + "' (known: request, build, console)");
  }
  auto offset = offset_of(call);
  if (!offset) {
    return error_response(offset.error());
  }
  auto out = read_slice(files, *offset);
  bool more = out["next_offset"].get<std::uint64_t>() > *offset;
  out["path"] = where;
  out["complete"] = !(*request)->is_open() && !more;
  return json_response(200, out);
}

// The build log of a commit named by what the user knows (a tree and a revision, the tree's job unless ?job=):
// the newest recorded build of (job, commit), a prebuild's too, which no request id leads to.
HttpResponse get_commit_build_log(ApiContext& c, const Call& call) {
  auto tree_name = call.query_or("tree");
  auto rev = call.query_or("commit");
  if (tree_name.empty() || rev.empty()) {
    return error_response(400, tree_name.empty() ? "tree: missing" : "commit: missing");
  }
  auto tree = c.trees.tree(tree_name);
  if (!tree || !*tree) {
    return error_response(404, "tree: '" + tree_name + "' not found");
  }
  auto sha = resolve_commit(c, tree_name, rev);
  if (!sha) {
    return error_response(sha.error());
  }
  auto job = call.query_or("job", (*tree)->job);
  auto offset = offset_of(call);
  if (!offset) {
    return error_response(offset.error());
  }
  auto build = c.samples.last_build(job, *sha, "");
  if (!build) {
    return error_response(build.error());
  }
  if (!*build || (*build)->log_path.empty()) {
    return error_response(404, "no build of " + *sha + " for job " + job + " is recorded (tree " + tree_name +
                                 "): it was never built, or its build was reused from an earlier one");
  }
  auto out = read_slice({(*build)->log_path}, *offset);
  bool more = out["next_offset"].get<std::uint64_t>() > *offset;
  auto open = c.queue.open_requests_for(job, *sha).value_or(0);
  out["path"] = (*build)->log_path;
  out["commit"] = *sha;
  out["job"] = job;
  out["outcome"] = (*build)->outcome; // ok | failed | infra
  out["complete"] = open == 0 && !more;
  return json_response(200, out);
}

} // namespace bisectd::daemon::api
