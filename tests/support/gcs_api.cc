// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "support/gcs_api.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/text.h"
#include "fmt/format.h"

namespace dataecho::testing {

void ServeCloudStorageApi(HttpServer* server, std::string token, int page_size) {
  const size_t page = static_cast<size_t>(page_size);
  server->SetRoute([server, token = std::move(token),
                    page](const HttpRequestLog& r) -> std::optional<HttpReply> {
    const std::string root = "/storage/v1/b/";
    if (r.path.rfind(root, 0) != 0) return std::nullopt;
    auto auth = r.headers.find("authorization");
    if (auth == r.headers.end() || auth->second != "Bearer " + token) {
      return HttpReply{.status = 401,
                       .body = R"({"error":{"code":401,"message":"Invalid Credentials"}})"};
    }
    std::string rest = r.path.substr(root.size());
    std::string bucket = rest.substr(0, rest.find('/'));
    std::string tail = rest.substr(bucket.size());
    if (tail == "/o") {  // list
      std::string prefix = r.query.count("prefix") ? r.query.at("prefix") : "";
      std::vector<std::string> paths = server->Paths("/" + bucket + "/" + prefix);
      size_t start = r.query.count("pageToken") ? std::stoul(r.query.at("pageToken")) : 0;
      std::string items;
      for (size_t i = start; i < paths.size() && i < start + page; ++i) {
        auto obj = server->Get(paths[i]);
        if (!items.empty()) items += ",";
        items += fmt::format(R"({{"name":{},"size":"{}","generation":"{}"}})",
                             JsonQuote(paths[i].substr(bucket.size() + 2)), obj->bytes->size(),
                             obj->generation);
      }
      std::string body = "{\"kind\":\"storage#objects\",\"items\":[" + items + "]";
      if (start + page < paths.size()) {
        body += fmt::format(",\"nextPageToken\":\"{}\"", start + page);
      }
      return HttpReply{.body = body + "}"};
    }
    if (tail.rfind("/o/", 0) != 0) return HttpReply{.status = 400, .body = "{}"};
    std::string path = "/" + bucket + "/" + tail.substr(3);
    auto obj = server->Get(path);
    if (!obj) return HttpReply{.status = 404, .body = R"({"error":{"message":"No such object"}})"};
    if (r.query.count("alt") && r.query.at("alt") == "media") {
      if (r.query.count("ifGenerationMatch") &&
          r.query.at("ifGenerationMatch") != std::to_string(obj->generation)) {
        return HttpReply{.status = 412, .body = R"({"error":{"message":"Precondition Failed"}})"};
      }
      return HttpReply{.object_path = path};
    }
    return HttpReply{.body = fmt::format(R"({{"name":{},"size":"{}","generation":"{}"}})",
                                         JsonQuote(tail.substr(3)), obj->bytes->size(),
                                         obj->generation)};
  });
}

}  // namespace dataecho::testing
