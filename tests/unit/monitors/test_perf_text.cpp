// perf stat / perf report text → perf-stat.* and perf-profile.* metrics, on outputs recorded on this host
// (data/host.perf-*) and in a QEMU TCG guest (data/guest.perf-*), and on hand-made hostile text.

#include "monitors/perf_text.hpp"

#include "data_file.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace bisectd::monitors;

TEST_CASE("perf stat -x, recorded on this host: software events per second, unsupported ones absent") {
  auto m = perf_stat_metrics(data_file("host.perf-stat"), 2.0);
  // perf's own elapsed time: 647.79 msec of task-clock at 0.648 CPUs utilized, not the 2 s the caller measured.
  double elapsed = 0.64779 / 0.648;
  CHECK(m.at("perf-stat.ps.task-clock") == Approx(647.79 / elapsed));
  CHECK(m.at("perf-stat.ps.context-switches") == Approx(167.0 / elapsed));
  CHECK(m.at("perf-stat.ps.cpu-migrations") == 0);
  CHECK(m.at("perf-stat.ps.page-faults") == Approx(410653.0 / elapsed));
  // No PMU here: cycles, instructions and the TLB events are "<not supported>", so neither they nor a ratio exist.
  CHECK_FALSE(m.contains("perf-stat.ps.cycles"));
  CHECK_FALSE(m.contains("perf-stat.ps.instructions"));
  CHECK_FALSE(m.contains("perf-stat.overall.ipc"));
  CHECK_FALSE(m.contains("perf-stat.overall.branch-miss-rate%"));
  CHECK(m.size() == 4);
}

TEST_CASE("perf stat ratios with LKP's names when a PMU counted both events") {
  auto csv = "1000,,cycles,1000,100.00,,\n"
             "2500,,instructions,1000,100.00,2.50,insn per cycle\n"
             "400,,branches,1000,100.00,,\n"
             "10,,branch-misses,1000,100.00,2.50,of all branches\n"
             "200,,dTLB-loads,1000,50.00,,\n"
             "3,,dTLB-load-misses,1000,50.00,,\n"
             "<not counted>,,iTLB-loads,0,0.00,,\n"
             "7,,iTLB-load-misses,1000,100.00,,\n";
  auto m = perf_stat_metrics(csv, 0.5);
  CHECK(m.at("perf-stat.ps.cycles") == 2000);
  CHECK(m.at("perf-stat.overall.ipc") == Approx(2.5));
  CHECK(m.at("perf-stat.overall.cpi") == Approx(0.4));
  CHECK(m.at("perf-stat.overall.branch-miss-rate%") == Approx(2.5));
  CHECK(m.at("perf-stat.overall.dTLB-load-miss-rate%") == Approx(1.5));
  CHECK_FALSE(m.contains("perf-stat.overall.iTLB-load-miss-rate%")); // iTLB-loads not counted
  CHECK(m.at("perf-stat.ps.iTLB-load-misses") == 14);
  SECTION("a run of no length gives the ratios but no rates") {
    auto none = perf_stat_metrics(csv, 0);
    CHECK(none.contains("perf-stat.overall.ipc"));
    CHECK_FALSE(none.contains("perf-stat.ps.cycles"));
    CHECK(perf_stat_metrics(csv, -1).size() == none.size());
  }
}

TEST_CASE("perf stat garbage gives nothing, never a bogus count") {
  CHECK(perf_stat_metrics("", 1).empty());
  CHECK(perf_stat_metrics("perf: command not found\n", 1).empty());
  CHECK(perf_stat_metrics("Error:\nNo permission to enable task-clock event.\n", 1).empty());
  CHECK(perf_stat_metrics("12,,\n,,cycles\nnan,,cycles,1,1\n-5,,cycles,1,1\n1e400,,x,1,1\n12ms,,y,1,1\n", 1).empty());
  auto hostile = perf_stat_metrics("5,,evil\x1b[2J,1,100\n5,,two words,1,100\n", 1);
  CHECK_FALSE(hostile.contains("perf-stat.ps.evil\x1b[2J"));
  CHECK(hostile.size() == 1);
  CHECK(hostile.contains("perf-stat.ps.two_words"));
}

TEST_CASE("perf report recorded on this host: children and self shares with LKP's names") {
  auto m = perf_profile_metrics(data_file("host.perf-profile"));
  CHECK(m.at("perf-profile.children.cycles-pp.handle_mm_fault") == Approx(18.32));
  CHECK(m.at("perf-profile.self.cycles-pp.handle_mm_fault") == Approx(0.30));
  CHECK(m.at("perf-profile.self.cycles-pp.exc_page_fault") == Approx(11.31));
  CHECK(m.at("perf-profile.children.cycles-pp.main") == Approx(31.91)); // a user symbol ([.])
  // perf prints 0.00% self for a pure caller: no self row for it, but its children row stays.
  CHECK(m.contains("perf-profile.children.cycles-pp.asm_exc_page_fault"));
  CHECK_FALSE(m.contains("perf-profile.self.cycles-pp.asm_exc_page_fault"));
  for (const auto& [name, value] : m) {
    INFO(name);
    CHECK(name.find("0x") == std::string::npos); // unresolved addresses are dropped
    CHECK(name.find("0000000000000000") == std::string::npos);
    CHECK(value > 0);
    CHECK(value <= 100);
  }
}

TEST_CASE("perf report without --children: the one column is self") {
  auto report = "# Overhead  Symbol\n"
                "# ........  ......\n"
                "    42.00%  [k] clear_page_erms\n"
                "     3.50%  [.] main\n";
  auto m = perf_profile_metrics(report);
  CHECK(m.at("perf-profile.self.cycles-pp.clear_page_erms") == 42);
  CHECK(m.at("perf-profile.self.cycles-pp.main") == 3.5);
  CHECK(m.size() == 2);
}

TEST_CASE("perf report call-graph lines, headers and garbage are not rows") {
  auto report = "# Samples: 7K of event 'cpu-clock'\n"
                "    10.00%     5.00%  [k] do_page_fault\n"
                "            |\n"
                "            |--5.00%--exc_page_fault\n"
                "             --2.00%--handle_mm_fault\n"
                "    101.00%    5.00%  [k] too_much\n"
                "    5.00%  4.00%  3.00%  [k] three_columns\n"
                "    nan%  [k] not_a_number\n"
                "    7.00%\n";
  auto m = perf_profile_metrics(report);
  CHECK(m.size() == 2);
  CHECK(m.at("perf-profile.children.cycles-pp.do_page_fault") == 10);
  CHECK(m.at("perf-profile.self.cycles-pp.do_page_fault") == 5);
}

TEST_CASE("hostile symbols are dropped or made safe for a mail") {
  CHECK(metric_symbol("mm_account_fault_locality") == "mm_account_fault_locality");
  CHECK(metric_symbol("clear_page_erms.cold") == "clear_page_erms.cold");
  CHECK(metric_symbol("std::vector<int>::push_back(int const&)") == "std::vector_int_::push_back_int_const__");
  CHECK(metric_symbol("50%_off") == "50__off"); // '%' would make the row an absolute one
  CHECK(metric_symbol("a\r\nSubject: spam") == std::nullopt);
  CHECK(metric_symbol("tab\there") == std::nullopt);
  CHECK(metric_symbol("caf\xc3\xa9") == std::nullopt);   // UTF-8 beyond ASCII
  CHECK(metric_symbol("bad\xff\xfe") == std::nullopt);   // not UTF-8
  CHECK(metric_symbol(std::string(161, 'z')) == std::nullopt);
  CHECK(metric_symbol(std::string(160, 'z')) == std::string(160, 'z'));
  CHECK(metric_symbol("") == std::nullopt);
  CHECK(metric_symbol("0xffffffff81001234") == std::nullopt);
  CHECK(metric_symbol("00007f0012345678") == std::nullopt);
  CHECK(metric_symbol("[unknown]") == std::nullopt);
  CHECK(metric_symbol("add") == "add"); // hex letters, but a name
  CHECK(metric_symbol("deadbeef_fn") == "deadbeef_fn");

  auto report = std::string("    9.00%     9.00%  [k] a\x1b]0;pwned\x07\n") + "    8.00%     8.00%  [k] " +
                std::string(100000, 'x') + "\n" + "    7.00%     3.00%  [.] operator new(unsigned long)\n" +
                "    6.00%     1.00%  [.] operator new(unsigned_long)\n";
  auto m = perf_profile_metrics(report);
  CHECK(m.size() == 2); // the two C++ names read the same once sanitised: one row each for self and children
  CHECK(m.at("perf-profile.self.cycles-pp.operator_new_unsigned_long_") == Approx(4));
  CHECK(m.at("perf-profile.children.cycles-pp.operator_new_unsigned_long_") == Approx(7));
}

TEST_CASE("perf stat: a rate or ratio that overflows is left out, not infinite") {
  auto m = perf_stat_metrics("1e308,,cycles,1,100\n1e-300,,instructions,1,100\n", 1e-10);
  CHECK_FALSE(m.contains("perf-stat.ps.cycles"));
  CHECK_FALSE(m.contains("perf-stat.overall.cpi"));
  CHECK(m.at("perf-stat.overall.ipc") == 0); // underflows to a finite 0
  for (const auto& [name, value] : m) {
    CHECK(std::isfinite(value));
  }
}

TEST_CASE("perf stat recorded in a QEMU TCG guest: software events only, rates over perf's own time") {
  // The console's run time was 3.52 s (perf's start-up included); perf counted 2138.35 msec at 0.957 CPUs.
  auto m = perf_stat_metrics(data_file("guest.perf-stat"), 3.52);
  double elapsed = 2.13835 / 0.957;
  CHECK(m.at("perf-stat.ps.page-faults") == Approx(45141 / elapsed));
  CHECK(m.at("perf-stat.ps.context-switches") == Approx(152 / elapsed));
  CHECK(m.size() == 4); // task-clock, context-switches, cpu-migrations, page-faults: TCG has no PMU
  CHECK_FALSE(m.contains("perf-stat.overall.ipc"));
}

TEST_CASE("perf report recorded in a QEMU TCG guest (cpu-clock, guess unwinder)") {
  // Recorded from the base demo kernel (tinyconfig + the qemu fragment) running page_fault under perf record -a -g.
  auto m = perf_profile_metrics(data_file("guest.perf-profile"));
  CHECK(m.at("perf-profile.self.cycles-pp.clear_page_rep") == Approx(20));
  CHECK(m.at("perf-profile.children.cycles-pp.handle_mm_fault") == Approx(48.99));
  CHECK(m.at("perf-profile.self.cycles-pp.exc_page_fault") == Approx(11.30));
  CHECK(m.contains("perf-profile.children.cycles-pp.main"));
  for (const auto& [name, value] : m) {
    INFO(name);
    CHECK(name.find("0x") == std::string::npos);
  }
}

TEST_CASE("perf report folded call chains recorded on this host: LKP's calltrace paths, innermost first") {
  // perf record -g of `dd bs=512 | ...` and gzip of /dev/urandom; report --no-children -g folded,0,caller,percent
  // --percent-limit 0.2. gzip is stripped: its chains are bare addresses.
  auto m = perf_calltrace_metrics(data_file("host.perf-calltrace"));
  const std::string p = "perf-profile.calltrace.cycles-pp.";
  // Every chain from read(2)'s wrapper into the kernel, whatever happens below do_syscall_64.
  CHECK(m.at(p + "entry_SYSCALL_64_after_hwframe.read") == Approx(14.41));
  CHECK(m.at(p + "do_syscall_64.entry_SYSCALL_64_after_hwframe.read") == Approx(14.41));
  CHECK(m.at(p + "read") == Approx(20.28)); // and the wrapper's own samples
  CHECK(m.at(p + "vfs_read.ksys_read.do_syscall_64.entry_SYSCALL_64_after_hwframe.read") == Approx(5.89));
  // Five frames at most: the outer callers of a deep path are cut.
  CHECK(m.at(p + "chacha_permute.chacha_block_generic.get_random_bytes_user.vfs_read.ksys_read") == Approx(2.61));
  CHECK(m.at(p + "pvm_irq_enable.__raw_callee_save_pvm_irq_enable.do_syscall_64.entry_SYSCALL_64_after_hwframe.read") ==
        Approx(7.30));
  CHECK(m.at(p + "entry_SYSCALL_64_after_hwframe.__GI___libc_write") == Approx(9.25));
  // A path's share sums its chains (anon_pipe_read: 0.28 + 0.23); one under 0.5 % of samples is no row.
  CHECK(m.at(p + "anon_pipe_read.vfs_read.ksys_read.do_syscall_64.entry_SYSCALL_64_after_hwframe") == Approx(0.51));
  CHECK_FALSE(m.contains(p + "copy_page_to_iter.anon_pipe_read.vfs_read.ksys_read.do_syscall_64"));
  for (const auto& [name, value] : m) {
    INFO(name);
    CHECK(name.find("0x") == std::string::npos); // the stripped gzip's addresses name nothing
    CHECK(value >= 0.5);
    CHECK(value <= 100);
  }
}

TEST_CASE("perf calltrace: recursion counts a sample once, hostile frames are skipped, names are bounded") {
  auto text = std::string("    40.00%  [k] f\n") +  // a symbol's own line is no chain
              "30.00% main;f;f;f;f;f;f\n" +         // f five deep twice in one chain: counted once
              "10.00% main;a\x1b]0;pwned\x07;g\n" + // the control-character frame is skipped: g under main
              "5.00% main;" + std::string(150, 'h') + ";" + std::string(150, 'i') + ";" + std::string(150, 'j') + "\n" +
              "x.00% main;k\n" + "7.00%\n" + "250% main;l\n" + "0.40% main;tiny\n";
  auto m = perf_calltrace_metrics(text);
  const std::string p = "perf-profile.calltrace.cycles-pp.";
  CHECK(m.at(p + "main") == Approx(45.4));
  CHECK(m.at(p + "f.main") == Approx(30));
  CHECK(m.at(p + "f.f.f.f.f") == Approx(30));
  CHECK(m.at(p + "g.main") == Approx(10));
  CHECK_FALSE(m.contains(p + "k.main")); // a share that is no number
  CHECK_FALSE(m.contains(p + "l.main")); // a share over 100 %
  CHECK_FALSE(m.contains(p + "tiny.main"));
  // 150-byte frames: two fit in 320 bytes, the third caller is cut.
  CHECK(m.at(p + std::string(150, 'j') + "." + std::string(150, 'i')) == Approx(5));
  for (const auto& [name, value] : m) {
    CHECK(name.size() <= p.size() + 320);
  }
}

TEST_CASE("perf calltrace: only the 100 largest paths of a run") {
  std::string text;
  for (int i = 0; i < 150; ++i) {
    text += "0.60% caller_" + std::to_string(i) + "\n";
  }
  text += "1.00% main\n";
  auto m = perf_calltrace_metrics(text);
  CHECK(m.size() == 100);
  CHECK(m.contains("perf-profile.calltrace.cycles-pp.main"));
}

TEST_CASE("perf stat as a user without kernel counting: events named with :u, rates over perf's own time") {
  // Recorded on this host by `nobody` at perf_event_paranoid 2: perf counts user space only and says so.
  auto m = perf_stat_metrics("\n443.86,msec,task-clock:u,443855283,100.00,0.311,CPUs utilized\n"
                             "59,,page-faults:u,443855283,100.00,132.926,/sec\n"
                             "<not supported>,,cycles:u,0,100.00,,\n",
                             9.0);
  double elapsed = 0.44386 / 0.311;
  CHECK(m.at("perf-stat.ps.page-faults:u") == Approx(59 / elapsed));
  CHECK(m.size() == 2);
}
