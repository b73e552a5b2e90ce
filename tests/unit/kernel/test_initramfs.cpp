#include "lab/initramfs.hpp"
#include "lab/run_blocks.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

using namespace bisectd;

namespace {

struct ParsedEntry {
  std::string name;
  unsigned mode = 0;
  std::string data;
};

unsigned hex_field(const std::string& archive, std::size_t offset, int index) {
  return static_cast<unsigned>(std::stoul(archive.substr(offset + 6 + 8 * index, 8), nullptr, 16));
}

std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// A minimal newc reader: checks magic and alignment as the kernel's unpacker needs them.
std::vector<ParsedEntry> parse_newc(const std::string& archive) {
  std::vector<ParsedEntry> entries;
  std::size_t at = 0;
  while (true) {
    REQUIRE(at % 4 == 0);
    REQUIRE(archive.compare(at, 6, "070701") == 0);
    ParsedEntry entry;
    entry.mode = hex_field(archive, at, 1);
    auto size = hex_field(archive, at, 6);
    auto name_size = hex_field(archive, at, 11);
    entry.name = archive.substr(at + 110, name_size - 1);
    REQUIRE(archive[at + 110 + name_size - 1] == '\0');
    auto data_at = align4(at + 110 + name_size);
    entry.data = archive.substr(data_at, size);
    at = align4(data_at + size);
    if (entry.name == "TRAILER!!!") {
      CHECK(at == archive.size());
      return entries;
    }
    entries.push_back(entry);
  }
}

} // namespace

TEST_CASE("lab::make_cpio writes a newc archive the kernel can unpack", "[kernel]") {
  using Kind = lab::CpioEntry::Kind;
  auto archive = lab::make_cpio({{"bin", Kind::directory, 0755, ""},
                                 {"bin/busybox", Kind::file, 0755, "ELF..."},
                                 {"bin/sh", Kind::symlink, 0777, "busybox"},
                                 {"init", Kind::file, 0755, "#!/bin/sh\n"}});
  auto entries = parse_newc(archive);
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].name == "bin");
  CHECK(entries[0].mode == 040755);
  CHECK(entries[1].mode == 0100755);
  CHECK(entries[1].data == "ELF...");
  CHECK(entries[2].mode == 0120777);
  CHECK(entries[2].data == "busybox");
  CHECK(entries[3].data == "#!/bin/sh\n");
  CHECK(lab::make_cpio({}) == lab::make_cpio({})); // deterministic (no mtimes)
}

TEST_CASE("lab::base_entries holds init, busybox, sh and the programs", "[kernel]") {
  test::TempDir tmp;
  lab::InitramfsInputs inputs;
  inputs.busybox = tmp.write("busybox", "BB");
  inputs.programs = {tmp.write("bench/page_fault", "PF"), tmp.write("bench/syscall", "SC")};
  auto entries = lab::base_entries(inputs);
  REQUIRE(entries);
  std::map<std::string, lab::CpioEntry> by_path;
  for (const auto& entry : *entries) {
    by_path[entry.path] = entry;
  }
  CHECK(by_path.at("init").data == lab::init_script());
  CHECK(by_path.at("init").mode == 0755);
  CHECK(by_path.at("bin/busybox").data == "BB");
  CHECK(by_path.at("bin/sh").kind == lab::CpioEntry::Kind::symlink);
  CHECK(by_path.at("usr/local/bin/page_fault").data == "PF");
  CHECK(by_path.at("usr/local/bin/syscall").mode == 0755);
  for (const char* dir : {"proc", "sys", "dev", "tmp", "bisectd"}) {
    CHECK(by_path.at(dir).kind == lab::CpioEntry::Kind::directory);
  }
  inputs.busybox = tmp.path() / "missing";
  CHECK_FALSE(lab::base_entries(inputs));
}

TEST_CASE("lab::job_entries carries argv as data, one argument per line", "[kernel]") {
  lab::RunSpec run;
  run.command = {"page_fault", "--seconds", "2", "$(reboot -f); echo 'x'"};
  run.env = {{"LANG", "C"}};
  run.timeout = std::chrono::seconds(90);
  auto entries = lab::job_entries(run, 3);
  REQUIRE(entries);
  REQUIRE(entries->size() == 5);
  CHECK((*entries)[0].path == "bisectd/argv");
  CHECK((*entries)[0].data == "page_fault\n--seconds\n2\n$(reboot -f); echo 'x'\n");
  CHECK((*entries)[1].data == "LANG=C\n");
  CHECK((*entries)[2].data == "3\n");
  CHECK((*entries)[3].data == "90\n");
  CHECK((*entries)[4].path == "bisectd/proc");
  CHECK((*entries)[4].data.empty()); // no monitors: /init prints no /proc snapshot

  SECTION("the /proc files of the run's monitors, one a line") {
    run.monitors = {"proc-vmstat", "meminfo", "time"};
    auto with_monitors = lab::job_entries(run, 1);
    REQUIRE(with_monitors);
    CHECK((*with_monitors)[4].data == "meminfo\nvmstat\n"); // time has no /proc file: the guest has no rusage
  }

  SECTION("rejected inputs") {
    run.command = {"bench", "two\nlines"};
    CHECK_FALSE(lab::job_entries(run, 1));
    run.command = {};
    CHECK_FALSE(lab::job_entries(run, 1));
    run.command = {"bench"};
    CHECK_FALSE(lab::job_entries(run, 0));
    run.env = {{"BAD NAME", "x"}};
    CHECK_FALSE(lab::job_entries(run, 1));
  }
}

TEST_CASE("lab::init_script reads the job without evaluating it", "[kernel]") {
  auto script = lab::init_script();
  CHECK(script.starts_with("#!/bin/sh\n"));
  CHECK(script.find("read -r arg; do set -- \"$@\" \"$arg\"; done < /bisectd/argv") != std::string::npos);
  CHECK(script.find("eval") == std::string::npos);
  CHECK(script.find("echo \"BISECTD-BOOT release=$(uname -r)\"") != std::string::npos);
  CHECK(script.find("reboot -f") != std::string::npos);
  // The snapshots are outside the timed part: before `start=` and after `end=`.
  auto before = script.find("snapshot before"), start = script.find("start=$(cut"), end = script.find("end=$(cut"),
       after = script.find("snapshot after");
  CHECK(before < start);
  CHECK(end < after);
  CHECK(after != std::string::npos);
  // The shell's own stat is read right around the benchmark (the `time` monitor), inside start..end.
  auto stat_before = script.find("read -r stat_before </proc/self/stat"), run = script.find("bisectd_perf_run /tmp"),
       stat_after = script.find("read -r stat_after </proc/self/stat");
  CHECK(start < stat_before);
  CHECK(stat_before < run);
  CHECK(run < stat_after);
  CHECK(stat_after < end);
  CHECK(script.find("echo \"BISECTD-STAT after $stat_after\"") != std::string::npos);
}

TEST_CASE("lab::cached_base_image is made once and gunzips to the archive", "[kernel]") {
  test::TempDir tmp;
  lab::InitramfsInputs inputs;
  inputs.busybox = tmp.write("busybox", "BB");
  auto first = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(first);
  auto again = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(again);
  CHECK(*first == *again);
  auto gz = base::read_file(*first);
  REQUIRE(gz);
  CHECK(gz->substr(0, 2) == "\x1f\x8b");
  inputs.busybox = tmp.write("busybox2", "BB2");
  auto other = lab::cached_base_image(inputs, tmp.path() / "cache");
  REQUIRE(other);
  CHECK(*other != *first);
}

TEST_CASE("lab::job_entries says which perf the job asks for", "[kernel]") {
  lab::RunSpec run;
  run.command = {"page_fault"};
  auto perf_file = [&] {
    auto entries = lab::job_entries(run, 1);
    REQUIRE(entries);
    for (const auto& entry : *entries) {
      if (entry.path == "bisectd/perf") {
        return entry.data;
      }
    }
    return std::string("(none)");
  };
  CHECK(perf_file() == "(none)");
  run.perf = {.stat = true, .profile = true};
  CHECK(perf_file() == "stat\nprofile\n");
  run.perf = {.stat = false, .profile = true};
  CHECK(perf_file() == "profile\n");
}

TEST_CASE("lab::init_script wraps the benchmark in perf outside the timed part only for what works", "[kernel]") {
  auto script = lab::init_script();
  // perf is tried once before the runs, for what the job asks (lab/run_blocks.hpp's functions, run in real shells
  // by unit.lab's "ssh perf" test), and a refusal leaves it out instead of failing the runs.
  auto tried = script.find("\nbisectd_perf_try /tmp $(cat /bisectd/perf 2>/dev/null)\n"),
       first_run = script.find("BISECTD-RUN-BEGIN");
  CHECK(tried < first_run);
  CHECK(script.find(lab::perf_block_functions()) < tried);
  // The time limit is on the benchmark inside perf, so a killed run cannot leave it running.
  CHECK(script.find("bisectd_perf_run /tmp timeout -s KILL \"$limit\" \"$@\"") != std::string::npos);
  // The perf blocks are printed after the run's end time is taken.
  CHECK(script.find("end=$(cut") < script.find("\n  bisectd_perf_blocks /tmp\n"));
  CHECK(script.find("eval") == std::string::npos);
}

TEST_CASE("lab::parse_ldd finds the libraries and the loader", "[kernel]") {
  auto paths = lab::parse_ldd("\tlinux-vdso.so.1 (0x00007ffd5a3f2000)\n"
                              "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f802c12c000)\n"
                              "\tlibnone.so.1 => not found\n"
                              "\t/lib64/ld-linux-x86-64.so.2 (0x00007f802c223000)\n"
                              "\tstatically linked\n");
  REQUIRE(paths.size() == 2);
  CHECK(paths[0] == "/lib/x86_64-linux-gnu/libm.so.6");
  CHECK(paths[1] == "/lib64/ld-linux-x86-64.so.2");
}

TEST_CASE("lab::perf_entries: perf, each library it needs at its path, directories first", "[kernel]") {
  // Any dynamically linked program shows the walk; the host's perf when Debian's linux-perf is installed.
  std::filesystem::path program = std::filesystem::exists("/usr/bin/perf") ? "/usr/bin/perf" : "/usr/bin/gzip";
  auto entries = lab::perf_entries(program);
  REQUIRE(entries);
  std::map<std::string, const lab::CpioEntry*> by_path;
  std::size_t last_dir = 0, first_file = entries->size();
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& e = (*entries)[i];
    by_path[e.path] = &e;
    if (e.kind == lab::CpioEntry::Kind::directory) {
      last_dir = i;
    } else {
      first_file = std::min(first_file, i);
    }
  }
  CHECK(last_dir < first_file);
  REQUIRE(by_path.contains("usr/bin/perf"));
  CHECK(by_path.at("usr/bin/perf")->data.substr(0, 4) == "\x7f" "ELF");
  CHECK(by_path.contains("lib64/ld-linux-x86-64.so.2"));
  CHECK(by_path.contains("lib64"));
  bool has_libc = false;
  for (const auto& [path, entry] : by_path) {
    has_libc = has_libc || path.ends_with("/libc.so.6");
    CHECK_FALSE(path.starts_with("/"));
  }
  CHECK(has_libc);
  CHECK_FALSE(lab::perf_entries("/nonexistent/perf"));
}
