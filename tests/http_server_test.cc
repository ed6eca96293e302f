// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The test HTTP server itself, driven over a plain socket.
#include "testing/http_server.h"
#include "support/store_objects.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace dataecho::testing {
namespace {

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool ok = false;
};

// One request on its own connection; reads until the server closes.
RawResponse Fetch(int port, const std::string& method, const std::string& path,
                  const std::map<std::string, std::string>& headers = {}) {
  RawResponse out;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return out;
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string raw;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return out;
  std::string head = raw.substr(0, end);
  out.body = raw.substr(end + 4);
  out.status = std::stoi(head.substr(9, 3));
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos) {
    size_t next = head.find("\r\n", pos + 2);
    std::string line =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string k = line.substr(0, colon);
      for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[k] = line.substr(colon + 2);
    }
    pos = next;
  }
  out.ok = true;
  return out;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartServer();
    ASSERT_NE(server_, nullptr);
    for (int i = 0; i < 1000; ++i) data_ += static_cast<char>('a' + i % 26);
    server_->Put("/obj", data_);
  }
  std::unique_ptr<HttpServer> server_;
  std::string data_;
};

TEST_F(HttpServerTest, ServesRangesEtagsAndHead) {
  RawResponse whole = Fetch(server_->port(), "GET", "/obj");
  ASSERT_TRUE(whole.ok);
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.body, data_);
  std::string etag = whole.headers["etag"];
  EXPECT_FALSE(etag.empty());

  RawResponse part = Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=10-19"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, data_.substr(10, 10));
  EXPECT_EQ(part.headers["content-range"], "bytes 10-19/1000");
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=990-"}}).body,
            data_.substr(990));
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=-5"}}).body, data_.substr(995));
  RawResponse past = Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=1000-"}});
  EXPECT_EQ(past.status, 416);
  EXPECT_EQ(past.headers["content-range"], "bytes */1000");

  RawResponse head = Fetch(server_->port(), "HEAD", "/obj");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], "1000");
  EXPECT_EQ(head.body, "");

  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj", {{"If-Match", etag}}).status, 200);
  server_->Put("/obj", "new");
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj", {{"If-Match", etag}}).status, 412);
  EXPECT_EQ(Fetch(server_->port(), "GET", "/missing").status, 404);
  EXPECT_EQ(server_->request_count(), 9);
  EXPECT_EQ(server_->request_count("missing"), 1);
  EXPECT_EQ(server_->requests()[1].headers.at("range"), "bytes=10-19");
}

TEST_F(HttpServerTest, ScriptedFaults) {
  server_->AddFault(
      {.kind = HttpFault::Kind::kStatus, .status = 503, .retry_after = "2", .skip = 1});
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj").status, 200);  // skipped
  RawResponse busy = Fetch(server_->port(), "GET", "/obj");
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.headers["retry-after"], "2");
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj").status, 200);  // spent

  server_->AddFault({.kind = HttpFault::Kind::kReset, .after_bytes = 300});
  RawResponse reset = Fetch(server_->port(), "GET", "/obj");
  EXPECT_EQ(reset.headers["content-length"], "1000");
  EXPECT_EQ(reset.body, data_.substr(0, 300));

  server_->AddFault({.kind = HttpFault::Kind::kShortBody, .after_bytes = 100});
  RawResponse shortb = Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=200-899"}});
  EXPECT_EQ(shortb.status, 206);
  EXPECT_EQ(shortb.headers["content-range"], "bytes 200-899/1000");
  EXPECT_EQ(shortb.body, data_.substr(200, 100));

  server_->AddFault({.kind = HttpFault::Kind::kWrongContentRange, .range_shift = -50});
  RawResponse shifted = Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=200-299"}});
  EXPECT_EQ(shifted.headers["content-range"], "bytes 150-299/1000");
  EXPECT_EQ(shifted.body, data_.substr(150, 150));

  server_->AddFault({.kind = HttpFault::Kind::kIgnoreRange});
  RawResponse ignored = Fetch(server_->port(), "GET", "/obj", {{"Range", "bytes=200-299"}});
  EXPECT_EQ(ignored.status, 200);
  EXPECT_EQ(ignored.body, data_);

  std::string old_etag = server_->Get("/obj")->etag;
  server_->AddFault(
      {.kind = HttpFault::Kind::kReplaceObject, .after_bytes = 10, .replacement = "replaced"});
  EXPECT_EQ(Fetch(server_->port(), "GET", "/obj").body, data_.substr(0, 10));
  EXPECT_NE(server_->Get("/obj")->etag, old_etag);
  EXPECT_EQ(*server_->Get("/obj")->bytes, "replaced");
  EXPECT_EQ(server_->faults_fired(), 6);
}

TEST_F(HttpServerTest, StalledResponseEndsWhenTheServerStops) {
  server_->AddFault({.kind = HttpFault::Kind::kStall, .after_bytes = 10, .stall = absl::Hours(1)});
  std::thread stopper([&] {
    while (server_->faults_fired() == 0) absl::SleepFor(absl::Milliseconds(5));
    absl::SleepFor(absl::Milliseconds(50));
    server_.reset();
  });
  RawResponse stalled = Fetch(server_->port(), "GET", "/obj");
  stopper.join();
  EXPECT_EQ(stalled.body, data_.substr(0, 10));
}

TEST(HttpServerDirectoryTest, ServesFilesAndRoutes) {
  std::string dir = ::testing::TempDir() + "/dataecho_http_dir_" + std::to_string(getpid());
  ASSERT_EQ(system(("mkdir -p " + dir + "/sub && printf hello > " + dir + "/sub/f").c_str()), 0);
  auto server = HttpServer::Start({.directory = dir});
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(Fetch((*server)->port(), "GET", "/sub/f").body, "hello");
  EXPECT_EQ(Fetch((*server)->port(), "GET", "/sub/f", {{"Range", "bytes=1-2"}}).body, "el");
  (*server)->SetRoute([](const HttpRequestLog& r) -> std::optional<HttpReply> {
    if (r.path == "/alias") return HttpReply{.object_path = "/sub/f"};
    if (r.query.count("q")) return HttpReply{.status = 200, .body = "q=" + r.query.at("q")};
    return std::nullopt;
  });
  EXPECT_EQ(Fetch((*server)->port(), "GET", "/alias").body, "hello");
  EXPECT_EQ(Fetch((*server)->port(), "GET", "/x?q=a%2Fb").body, "q=a/b");
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace dataecho::testing
