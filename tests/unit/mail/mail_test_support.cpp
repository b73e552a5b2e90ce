#include "mail_test_support.hpp"

#include "base/fs.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bisectd::testing {

std::filesystem::path temp_dir(const std::string& prefix) {
  const char* root = std::getenv("BISECTD_TEST_TMP");
  std::filesystem::path parent = root != nullptr ? std::filesystem::path(root) : std::filesystem::temp_directory_path();
  std::filesystem::create_directories(parent);
  auto dir = base::make_temp_dir(prefix, parent);
  if (!dir) {
    throw std::runtime_error(dir.error().message);
  }
  return *dir;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

int unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("cannot bind a loopback socket");
  }
  int port = ntohs(address.sin_port);
  ::close(fd); // never listened on: connecting is refused
  return port;
}

} // namespace bisectd::testing
