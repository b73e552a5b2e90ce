# The allow-list of the project's layers: for every folder that is a library (or a test or benchmark folder),
# which project headers and which third-party libraries its files may include. cmake/CheckLayering.cmake checks
# every #include of every .cpp/.hpp against it on each build; a file in no listed folder fails the check too.
#
# Each entry: "folder | project prefixes | third-party libraries | system headers".
#   project prefixes: include paths a file may name ("storage/" = any storage header, "base/error.hpp" = that one);
#                     the folder itself is always allowed, and so are quoted includes without a '/' (same folder).
#   third-party:      names from BISECTD_THIRD_PARTY below.
#   system headers:   "std" = C++ standard headers only (<vector>, <cmath>: no '.h', no '/'); "posix" = any.
# The longest folder that contains a file decides its layer (daemon/watch/x.cpp is daemon/watch, not daemon).

set(BISECTD_PURE_BASE "base/error.hpp base/strings.hpp base/units.hpp base/hash.hpp base/glob.hpp")
set(BISECTD_THIRD_PARTY
  "git2=git2(\\.h|/)" "sqlite=sqlite3\\.h" "boost=boost/" "curl=curl/" "yaml=yaml-cpp/" "spdlog=spdlog/"
  "fmt=fmt/" "json=nlohmann/" "cli11=CLI/" "catch2=catch2/")

set(BISECTD_LAYERS
  # The libraries, bottom up.
  "base | | | posix"
  "bisect | ${BISECTD_PURE_BASE} | | std"
  "monitors | ${BISECTD_PURE_BASE} | | std"
  "storage | base/ | sqlite | std"
  "vcs | base/ | git2 | posix"
  "kbuild | base/ | spdlog fmt | posix"
  "lab | base/ monitors/ | spdlog fmt json curl | posix"
  "report | ${BISECTD_PURE_BASE} | | std"
  # The daemon's rooms.
  "daemon/core | base/ bisect/ storage/ vcs/ kbuild/ lab/ | | std"
  "daemon/config | base/ bisect/ monitors/ storage/ kbuild/ lab/ daemon/core/ daemon/mail/transport.hpp | yaml spdlog fmt | std"
  "daemon/mail | base/ storage/ | curl spdlog fmt | posix"
  "daemon/run | base/ bisect/ storage/ vcs/ kbuild/ lab/ daemon/core/ | spdlog fmt | std"
  "daemon/watch | base/ bisect/ storage/ vcs/ daemon/core/ | spdlog fmt | std"
  "daemon/verify | base/ bisect/ storage/ vcs/ kbuild/ daemon/core/ daemon/run/ | json spdlog fmt | std"
  "daemon/reporting | base/ bisect/ storage/ vcs/ report/ daemon/core/ | json spdlog fmt | std"
  "daemon/bisection | base/ bisect/ storage/ vcs/ kbuild/ daemon/core/ daemon/run/ daemon/watch/ daemon/verify/ daemon/reporting/ | json spdlog fmt | std"
  "daemon/api | base/ bisect/ storage/ vcs/ report/ daemon/core/ daemon/config/job_file.hpp | boost json spdlog fmt | std"
  "daemon | base/ bisect/ storage/ vcs/ kbuild/ lab/ report/ daemon/ | boost json spdlog fmt cli11 | posix"
  # The CLI talks to the daemon over HTTP: never storage, never the daemon's code.
  "cli | base/ bisect/ vcs/ | curl cli11 json spdlog fmt | posix"
  # Benchmarks and tests: what they exercise, and their own support code.
  "bench | base/ bisect/ monitors/ vcs/ | json | posix"
  # The whole-bisection bench runs the daemon's driver on the tests' fakes in bisect-sim's world.
  "bench/e2e-cost | base/ bisect/ storage/ vcs/ kbuild/ daemon/ fakes/ support/ bisect-sim/ | json spdlog | posix"
  "tests/support | base/ | | posix"
  "tests/fakes | fakes/ base/ bisect/ storage/ vcs/ kbuild/ lab/ daemon/core/ daemon/reporting/ daemon/verify/ | | std"
  "tests/kernel | base/ kbuild/ lab/ daemon/config/config.hpp | | posix"
  "tests/lava | base/ lab/ | | posix"
  "tests/layering | | | std"
  "tests/fuzz | base/ monitors/ storage/ vcs/ lab/ report/ daemon/ fakes/ | json | posix"
  "tests | support/ | catch2 | posix"
  "tests/unit/base | base/ support/ | catch2 | posix"
  # The recorded stall (tests/golden/bisect/outlier-stall.json) is read with nlohmann; bisect/ itself stays pure.
  "tests/unit/bisect | bisect/ ${BISECTD_PURE_BASE} | catch2 json | std"
  "tests/unit/monitors | monitors/ ${BISECTD_PURE_BASE} | catch2 | std"
  "tests/unit/storage | storage/ base/ support/ | catch2 | std"
  "tests/unit/vcs | vcs/ base/ support/ | catch2 | posix"
  "tests/unit/kbuild | kbuild/ base/ support/ | catch2 | posix"
  "tests/unit/lab | lab/ base/ support/ | catch2 | posix"
  "tests/unit/kernel | lab/ kbuild/ base/ support/ | catch2 | posix"
  # The bad-commit-metadata catalogue starts from a raw commit message, as the daemon does (vcs splits it).
  "tests/unit/report | report/ base/ support/ vcs/commit_message.hpp | catch2 | std"
  "tests/unit/mail | daemon/mail/ report/ base/ support/ | catch2 curl | posix"
  "tests/unit/daemon | daemon/ storage/ vcs/ kbuild/ lab/ bisect/ report/ base/ fakes/ support/ | catch2 json spdlog | posix"
  "tests/unit/cli | cli/ bisect/ vcs/ base/ support/ | catch2 json | posix")
