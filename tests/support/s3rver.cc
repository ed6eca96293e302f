// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/s3rver.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "fmt/format.h"

#ifndef DATAECHO_S3RVER_BIN
#define DATAECHO_S3RVER_BIN ""
#endif

namespace dataecho::testing {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

struct Upload {
  const std::string* bytes;
  size_t pos = 0;
};

size_t ReadUpload(char* dst, size_t size, size_t n, void* p) {
  auto* u = static_cast<Upload*>(p);
  size_t take = std::min(size * n, u->bytes->size() - u->pos);
  std::memcpy(dst, u->bytes->data() + u->pos, take);
  u->pos += take;
  return take;
}

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

}  // namespace

std::string S3rver::Binary() {
  std::string bin = DATAECHO_S3RVER_BIN;
  return !bin.empty() && access(bin.c_str(), X_OK) == 0 ? bin : "";
}

absl::StatusOr<std::unique_ptr<S3rver>> S3rver::Start() {
  std::string bin = Binary();
  if (bin.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("s3rver is not installed at {} (run scripts/setup.sh)", DATAECHO_S3RVER_BIN));
  }
  std::unique_ptr<S3rver> s(new S3rver());
  s->data_dir_ =
      fmt::format("{}/dataecho_s3rver_{}_{}", std::filesystem::temp_directory_path().string(),
                  getpid(), reinterpret_cast<uintptr_t>(s.get()));
  std::filesystem::create_directories(s->data_dir_);
  // s3rver's continuation tokens use DES, which OpenSSL 3 keeps in its
  // legacy provider.
  std::vector<std::string> env_strings = {"NODE_OPTIONS=--openssl-legacy-provider"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "NODE_OPTIONS=", 13) != 0) env_strings.push_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (int tries = 0; tries < 3; ++tries) {
    s->port_ = FreePort();
    std::string port = std::to_string(s->port_);
    std::vector<std::string> args = {bin,         "-d", s->data_dir_, "-a",
                                     "127.0.0.1", "-p", port,         "--silent"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, STDOUT_FILENO);
      execve(bin.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    s->pid_ = pid;
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      if (Accepts(s->port_)) return s;
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) break;  // exited (port taken?)
      absl::SleepFor(absl::Milliseconds(50));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    s->pid_ = -1;
  }
  return absl::UnavailableError("s3rver did not start");
}

S3rver::~S3rver() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(data_dir_, ec);
}

std::string S3rver::endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }

absl::Status S3rver::CreateBucket(const std::string& bucket) { return Put("/" + bucket, ""); }

absl::Status S3rver::PutObject(const std::string& bucket, const std::string& key,
                               const std::string& bytes) {
  return Put("/" + bucket + "/" + key, bytes);
}

absl::Status S3rver::Put(const std::string& path, const std::string& bytes) {
  CURL* curl = curl_easy_init();
  Upload upload{&bytes};
  std::string url = endpoint() + path;
  curl_slist* headers = curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, &ReadUpload);
  curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
  curl_easy_setopt(curl, CURLOPT_USERPWD, "S3RVER:S3RVER");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK || code != 200) {
    return absl::UnavailableError(
        fmt::format("PUT {}: {} HTTP {}", url, curl_easy_strerror(rc), code));
  }
  return absl::OkStatus();
}

}  // namespace dataecho::testing
