#include "ppa/tools.hpp"

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace kaleido::ppa {

namespace fs = std::filesystem;

std::string find_tool(const std::string& name, const std::string& debian_package) {
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      const fs::path candidate = fs::path(dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate.string();
    }
    start = end + 1;
  }
  throw Error("`" + name + "` was not found on PATH; install the Debian package `" + debian_package +
              "` (apt-get install " + debian_package + ")");
}

ToolRun run_tool(const std::vector<std::string>& argv, const fs::path& workdir, const fs::path& log) {
  if (argv.empty()) throw Error("run_tool: empty command");
  ToolRun r;
  r.log = log;
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw FileError(log.string(), std::string("cannot write: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw Error(std::string("cannot start ") + argv[0] + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: the tool reads nothing from us; its output goes to the log.
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (::chdir(workdir.c_str()) != 0) _exit(126);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string("waiting for ") + argv[0] + ": " + std::strerror(errno));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.output = read_file(log);
  return r;
}

std::string tail_lines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  size_t count = 0;
  while (pos > 0) {
    const size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    if (++count == lines) return text.substr(nl + 1);
    pos = nl;
  }
  return text;
}

}  // namespace kaleido::ppa
