// Build fingerprints: a streaming SHA-256 and the stamp-stripping scan of a kernel image.

#include "kbuild/fingerprint.hpp"

#include "base/fs.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace bisectd::kbuild {

namespace {

namespace fs = std::filesystem;

constexpr std::array<std::uint32_t, 64> k_round{
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// Incremental SHA-256 (FIPS 180-4): update() any number of times, then hex() once.
class Sha256 {
public:
  void update(std::string_view data) {
    m_bytes += data.size();
    while (!data.empty()) {
      std::size_t take = std::min(data.size(), m_block.size() - m_used);
      std::memcpy(m_block.data() + m_used, data.data(), take);
      m_used += take;
      data.remove_prefix(take);
      if (m_used == m_block.size()) {
        compress();
        m_used = 0;
      }
    }
  }

  std::string hex() {
    std::uint64_t bits = m_bytes * 8;
    update(std::string_view("\x80", 1));
    while (m_used != 56) {
      update(std::string_view("\0", 1));
    }
    std::array<char, 8> length{};
    for (int i = 0; i < 8; ++i) {
      length[static_cast<std::size_t>(i)] = static_cast<char>(bits >> (56 - 8 * i));
    }
    update(std::string_view(length.data(), length.size()));
    static constexpr std::string_view k_digits = "0123456789abcdef";
    std::string out;
    for (std::uint32_t word : m_state) {
      for (int shift = 28; shift >= 0; shift -= 4) {
        out += k_digits[(word >> shift) & 0xf];
      }
    }
    return out;
  }

private:
  // Plain arrays and always-inlined helpers: the daemon may run a Debug build, where checked std::array access and
  // out-of-line std::rotr made hashing a vmlinux take seconds.
  [[gnu::always_inline]] static inline std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress() {
    std::uint32_t w[64];
    const unsigned char* p = m_block.data();
    for (int i = 0; i < 16; ++i, p += 4) {
      w[i] = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    const std::uint32_t* k = k_round.data();
    std::uint32_t* state = m_state.data();
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }

  std::array<std::uint32_t, 8> m_state{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> m_block{};
  std::size_t m_used = 0;
  std::uint64_t m_bytes = 0;
};

constexpr std::size_t k_chunk = 1 << 20;
constexpr std::size_t k_note_header = 16; // namesz, descsz, type (4 bytes each, little-endian) + "GNU\0"
constexpr std::uint32_t k_max_build_id = 64;
constexpr std::string_view k_build_id_tail("\x03\0\0\0GNU\0", 8); // NT_GNU_BUILD_ID, name "GNU"

std::uint32_t le32(const std::string& buffer, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    value |= std::uint32_t{static_cast<unsigned char>(buffer[at + i])} << (8 * i);
  }
  return value;
}

// Zeroes the descriptor of every GNU build-id note lying wholly inside `buffer` (x86 images are little-endian).
void zero_build_ids(std::string& buffer) {
  for (auto at = buffer.find(k_build_id_tail, 8); at != std::string::npos; at = buffer.find(k_build_id_tail, at + 1)) {
    std::size_t start = at - 8;
    std::uint32_t size = le32(buffer, start + 4);
    bool whole = start + k_note_header + size <= buffer.size();
    if (le32(buffer, start) == 4 && size > 0 && size <= k_max_build_id && whole) {
      std::fill_n(buffer.begin() + static_cast<std::ptrdiff_t>(start + k_note_header), size, '\0');
    }
  }
}

// Replaces every occurrence of each stamp (longest first, so a release hides before its localversion suffix).
void mask_stamps(std::string& buffer, const std::vector<std::string>& stamps) {
  for (const auto& stamp : stamps) {
    for (auto at = buffer.find(stamp); at != std::string::npos; at = buffer.find(stamp, at + stamp.size())) {
      std::fill_n(buffer.begin() + static_cast<std::ptrdiff_t>(at), stamp.size(), '#');
    }
  }
}

// Sorts the stamps longest first (see mask_stamps); an empty stamp is an error naming `what`.
Status sort_stamps(const fs::path& what, std::vector<std::string>& stamps) {
  if (std::ranges::any_of(stamps, [](const auto& stamp) { return stamp.empty(); })) {
    return make_error(ErrorCode::invalid_input, what.string() + ": empty version stamp to strip");
  }
  std::ranges::sort(stamps, [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return {};
}

// Files hashed here come from a build (the build dir, the artifacts): opened as hostile (base::open_untrusted) and
// streamed, so the cap bounds the time, not the memory (vmlinux with debug info is hundreds of MB).
constexpr std::uintmax_t k_hashed_file_cap = 4ULL * 1024 * 1024 * 1024;

// Reads up to `chunk.size()` bytes into `chunk` (fewer only at the end of the file). Error names the file.
Result<std::size_t> read_chunk(int fd, const fs::path& path, std::string& chunk) {
  std::size_t filled = 0;
  while (filled < chunk.size()) {
    auto got = ::read(fd, chunk.data() + filled, chunk.size() - filled);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return make_error(ErrorCode::io, path.string() + ": read error: " + std::strerror(errno));
    }
    if (got == 0) {
      break;
    }
    filled += static_cast<std::size_t>(got);
  }
  return filled;
}

// Feeds one file's bytes to `sha`. Error names the file.
Status hash_file(const fs::path& path, Sha256& sha) {
  BISECTD_TRY_ASSIGN(auto fd, base::open_untrusted(path, k_hashed_file_cap));
  std::string chunk(k_chunk, '\0');
  std::uintmax_t total = 0;
  while (true) {
    BISECTD_TRY_ASSIGN(auto got, read_chunk(fd.get(), path, chunk));
    total += got;
    if (total > k_hashed_file_cap) {
      return make_error(ErrorCode::invalid_input, path.string() + ": refused: grew past its size cap while read");
    }
    sha.update(std::string_view(chunk.data(), got));
    if (got < chunk.size()) {
      return {};
    }
  }
}

// Feeds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
void update_field(Sha256& sha, std::string_view field) {
  sha.update(std::to_string(field.size()) + ":");
  sha.update(field);
}

// Feeds one artifact entry (file: name + content; symlink: name + target; directory: its name).
Status hash_entry(const fs::path& path, const std::string& name, Sha256& sha) {
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) {
    return make_error(ErrorCode::io, path.string() + ": missing");
  }
  if (fs::is_symlink(status)) {
    update_field(sha, "link " + name);
    update_field(sha, fs::read_symlink(path, ec).string());
    return {};
  }
  if (fs::is_directory(status)) {
    update_field(sha, "dir " + name);
    return {};
  }
  update_field(sha, "file " + name);
  update_field(sha, std::to_string(fs::file_size(path, ec)));
  return hash_file(path, sha);
}

} // namespace

std::string sha256_hex(std::string_view data) {
  Sha256 sha;
  sha.update(data);
  return sha.hex();
}

Result<std::string> kernel_fingerprint(const fs::path& image, std::vector<std::string> stamps) {
  BISECTD_TRY(sort_stamps(image, stamps));
  std::size_t longest = std::max(k_note_header + k_max_build_id, stamps.empty() ? 0 : stamps.front().size());
  BISECTD_TRY_ASSIGN(auto fd, base::open_untrusted(image, k_hashed_file_cap));
  // The last longest-1 bytes stay in the buffer for the next round: a stamp or note that starts before
  // them ends inside the buffer, so every match is seen whole once.
  Sha256 sha;
  std::string buffer;
  std::string chunk(k_chunk, '\0');
  bool more = true;
  std::uintmax_t total = 0;
  while (more) {
    BISECTD_TRY_ASSIGN(auto got, read_chunk(fd.get(), image, chunk));
    total += got;
    if (total > k_hashed_file_cap) {
      return make_error(ErrorCode::invalid_input, image.string() + ": refused: grew past its size cap while read");
    }
    more = got == chunk.size();
    buffer.append(chunk.data(), got);
    mask_stamps(buffer, stamps);
    zero_build_ids(buffer);
    std::size_t emit = more ? buffer.size() - std::min(buffer.size(), longest - 1) : buffer.size();
    sha.update(std::string_view(buffer).substr(0, emit));
    buffer.erase(0, emit);
  }
  return sha.hex();
}

Result<std::string> tree_fingerprint(const fs::path& dir, std::vector<std::string> stamps) {
  BISECTD_TRY(sort_stamps(dir, stamps));
  std::vector<std::pair<std::string, fs::path>> entries; // (masked relative path, path)
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    auto name = it->path().lexically_relative(dir).string();
    mask_stamps(name, stamps);
    entries.emplace_back(std::move(name), it->path());
  }
  if (ec) {
    return make_error(ErrorCode::io, dir.string() + ": cannot list: " + ec.message());
  }
  std::ranges::sort(entries);
  Sha256 sha;
  for (const auto& [name, path] : entries) {
    auto status = fs::symlink_status(path, ec);
    if (fs::is_symlink(status)) {
      auto target = fs::read_symlink(path, ec).string();
      mask_stamps(target, stamps);
      update_field(sha, "link " + name);
      update_field(sha, target);
    } else if (fs::is_regular_file(status)) {
      BISECTD_TRY_ASSIGN(auto content, kernel_fingerprint(path, stamps));
      update_field(sha, "file " + name);
      update_field(sha, content);
    } else {
      update_field(sha, "dir " + name);
    }
  }
  return sha.hex();
}

Result<std::string> artifacts_fingerprint(const fs::path& dir, const std::vector<std::string>& artifacts) {
  Sha256 sha;
  for (const auto& artifact : artifacts) {
    auto root = dir / fs::path(artifact).lexically_normal();
    BISECTD_TRY(hash_entry(root, artifact, sha));
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(root, ec))) {
      continue;
    }
    std::vector<fs::path> entries;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      entries.push_back(it->path());
    }
    if (ec) {
      return make_error(ErrorCode::io, root.string() + ": cannot list: " + ec.message());
    }
    std::ranges::sort(entries);
    for (const auto& entry : entries) {
      BISECTD_TRY(hash_entry(entry, (fs::path(artifact) / entry.lexically_relative(root)).string(), sha));
    }
  }
  return sha.hex();
}

} // namespace bisectd::kbuild
