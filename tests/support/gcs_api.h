// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// gcs_api.h: makes an HttpServer answer the part of the Cloud Storage JSON
// API the gs:// store uses, over the server's in-memory objects: object
// metadata, alt=media downloads (with ifGenerationMatch: 412 on a mismatch)
// and paged listings. The object gs://BUCKET/KEY is the path /BUCKET/KEY.
// Every request needs "Authorization: Bearer TOKEN" (else 401).
//
//   auto server = dataecho::testing::HttpServer::Start({});
//   dataecho::testing::ServeCloudStorageApi(server->get(), "ya29.token", 3);
//   (*server)->Put("/bkt/dir/obj", bytes);
//   // gs://bkt/dir/obj with gcs.endpoint = (*server)->url(), or with
//   // STORAGE_EMULATOR_HOST=127.0.0.1:PORT and GOOGLE_OAUTH_ACCESS_TOKEN.
#ifndef DATAECHO_TESTS_SUPPORT_GCS_API_H_
#define DATAECHO_TESTS_SUPPORT_GCS_API_H_

#include <string>

#include "testing/http_server.h"

namespace dataecho::testing {

// Routes /storage/v1/b/... on `server` (the route keeps a plain pointer to
// the server it belongs to). Listings return at most `page_size` items per
// page.
void ServeCloudStorageApi(HttpServer* server, std::string token, int page_size);

}  // namespace dataecho::testing

#endif  // DATAECHO_TESTS_SUPPORT_GCS_API_H_
