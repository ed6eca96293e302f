// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The specs of the options of stores, sharding, record formats, decoders and
// augmenters. Field docs are the C++ headers' comments, shortened.
#include <string>

#include "options.h"

namespace dataecho::python {

template <>
const OptionsSpec<TFRecordReaderOptions>& Spec<TFRecordReaderOptions>() {
  using O = TFRecordReaderOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("TFRecordReaderOptions"))
           .Add("compression", &O::compression,
                "'none', 'gzip', 'zlib' or 'auto' (gzip for URIs ending in .gz).")
           .Add("skip_corrupt", &O::skip_corrupt,
                "Skip corrupt records instead of failing (a bad length skips the rest of the "
                "file); truncation is an error either way.")
           .Add("max_skipped", &O::max_skipped,
                "With skip_corrupt: skipped regions tolerated per source before DATA_LOSS.")
           .Add("max_record_bytes", &O::max_record_bytes,
                "Larger lengths are treated as corruption (checked before allocating).")
           .Add("buffer_size", &O::buffer_size, "Read (and inflate) buffer per open file, bytes.")
           .Add("read_ahead", &O::read_ahead, "Bytes fetched ahead of the reader per file.");
  return *spec;
}

template <>
const OptionsSpec<InterleaveOptions>& Spec<InterleaveOptions>() {
  using O = InterleaveOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("InterleaveOptions"))
           .Add("cycle_length", &O::cycle_length,
                "Files read concurrently, each by its own thread; 1 = one after the other on "
                "the consumer's thread.")
           .Add("buffered_records", &O::buffered_records,
                "Records each reading thread may hold ahead of the consumer.")
           .Add("deterministic", &O::deterministic,
                "True: fixed round-robin order; False: first ready record first.");
  return *spec;
}

template <>
const OptionsSpec<IdxOptions>& Spec<IdxOptions>() {
  using O = IdxOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("IdxOptions"))
           .Add("compression", &O::compression, "'auto' (gzip for .gz), 'none', 'gzip', 'zlib'.")
           .Add("buffer_size", &O::buffer_size, "Read (and inflate) buffer per file, bytes.")
           .Add("read_ahead", &O::read_ahead, "Bytes fetched ahead of the reader per file.");
  return *spec;
}

template <>
const OptionsSpec<FixedLengthOptions>& Spec<FixedLengthOptions>() {
  using O = FixedLengthOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("FixedLengthOptions"))
           .Add("record_bytes", &O::record_bytes, "Bytes per record. REQUIRED, > 0.")
           .Add("header_bytes", &O::header_bytes, "Skipped at the start of each file.")
           .Add("footer_bytes", &O::footer_bytes, "Ignored at the end of each file.")
           .Add("compression", &O::compression, "'none', 'gzip', 'zlib' or 'auto'.")
           .Add("buffer_size", &O::buffer_size, "Read (and inflate) buffer per file, bytes.")
           .Add("read_ahead", &O::read_ahead, "Bytes fetched ahead of the reader per file.");
  return *spec;
}

template <>
const OptionsSpec<FixedImageLayout>& Spec<FixedImageLayout>() {
  using O = FixedImageLayout;
  static const auto* spec =
      &(*new OptionsSpec<O>("FixedImageLayout"))
           .Add("label_bytes", &O::label_bytes, "Bytes before the pixels (CIFAR-100: 2).")
           .Add("label_index", &O::label_index, "Which of them is the label.")
           .Add("height", &O::height, "Image height.")
           .Add("width", &O::width, "Image width.")
           .Add("channels", &O::channels, "Image channels.")
           .Add("channels_first", &O::channels_first,
                "Pixels stored CHW (planar, as CIFAR); the output is always HWC.");
  return *spec;
}

template <>
const OptionsSpec<ShardOptions>& Spec<ShardOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<ShardOptions>("ShardOptions"))
           .Add("rank", &ShardOptions::rank,
                "This worker's index in [0, world_size); -1: from the environment (RANK, "
                "OMPI_COMM_WORLD_RANK, SLURM_PROCID).")
           .Add("world_size", &ShardOptions::world_size,
                "Number of workers; -1: from the environment. Both or neither are set.")
           .Add("allow_empty", &ShardOptions::allow_empty,
                "Let a worker get no file (fewer files than workers) instead of failing. Only "
                "for jobs whose workers do not step together.");
  return *spec;
}

template <>
const OptionsSpec<RandomCropOptions>& Spec<RandomCropOptions>() {
  using O = RandomCropOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("RandomCropOptions"))
           .Add("height", &O::height, "Output height. REQUIRED, > 0.")
           .Add("width", &O::width, "Output width. REQUIRED, > 0.")
           .Add("padding", &O::padding, "Zero pixels added on every side before cropping.")
           .Add("seed", &O::seed, "Seed; draws depend on (seed, source_index, repeat_index).")
           .Add("component", &O::component, "Which component of the Example.");
  return *spec;
}

template <>
const OptionsSpec<RandomFlipOptions>& Spec<RandomFlipOptions>() {
  using O = RandomFlipOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("RandomFlipOptions"))
           .Add("probability", &O::probability, "Chance of a horizontal (left-right) flip.")
           .Add("seed", &O::seed, "Seed; draws depend on (seed, source_index, repeat_index).")
           .Add("component", &O::component, "Which component of the Example.");
  return *spec;
}

template <>
const OptionsSpec<NormalizeOptions>& Spec<NormalizeOptions>() {
  using O = NormalizeOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("NormalizeOptions"))
           .Add("mean", &O::mean, "Per channel (or one value): out = (in * scale - mean) / stddev.")
           .Add("stddev", &O::stddev, "Per channel (or one value).")
           .Add("scale", &O::scale, "Applied first (uint8 -> [0, 1]).")
           .Add("dtype", &O::dtype, "'float32', 'float16' or 'bfloat16'.")
           .Add("component", &O::component, "Which component of the Example.");
  return *spec;
}

template <>
const OptionsSpec<CastOptions>& Spec<CastOptions>() {
  using O = CastOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("CastOptions"))
           .Add("dtype", &O::dtype, "'float32', 'float16' or 'bfloat16'.")
           .Add("scale", &O::scale, "out = in * scale.")
           .Add("component", &O::component, "Which component of the Example.");
  return *spec;
}

template <>
const OptionsSpec<JpegDecodeOptions>& Spec<JpegDecodeOptions>() {
  using O = JpegDecodeOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("JpegDecodeOptions"))
           .Add("channels", &O::channels,
                "Output channels: 0 = as stored (1 or 3), 1 = grayscale, 3 = RGB.")
           .Add("max_pixels", &O::max_pixels,
                "Larger images are RESOURCE_EXHAUSTED, checked before allocating.")
           .Add("fast_idct", &O::fast_idct, "Faster, slightly less accurate integer IDCT.");
  return *spec;
}

template <>
const OptionsSpec<RetryOptions>& Spec<RetryOptions>() {
  using O = RetryOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("RetryOptions"))
           .Add("max_attempts", &O::max_attempts,
                "Requests made for one range before UNAVAILABLE, the first included.")
           .Add("initial_backoff", &O::initial_backoff, "Wait before the first retry, seconds.")
           .Add("max_backoff", &O::max_backoff, "Cap on the doubling backoff, seconds.")
           .Add("max_retry_after", &O::max_retry_after,
                "A server's Retry-After is honoured up to this bound, seconds.")
           .Add("retry_connect_errors", &O::retry_connect_errors,
                "Retry 'could not resolve host' and 'connection refused' too.");
  return *spec;
}

template <>
const OptionsSpec<HttpOptions>& Spec<HttpOptions>() {
  using O = HttpOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("HttpOptions"))
           .Add("max_concurrency", &O::max_concurrency, "Transfers in flight over the store.")
           .Add("chunk_size", &O::chunk_size, "Bytes per ranged GET.")
           .Add("connect_timeout", &O::connect_timeout, "Limit to connect, seconds.")
           .Add("stall_timeout", &O::stall_timeout,
                "A transfer that receives no byte for this long is retried, seconds.")
           .Add("verify_tls", &O::verify_tls, "Verify TLS certificates (https).")
           .Add("user_agent", &O::user_agent, "Sent as User-Agent.");
  return *spec;
}

template <>
const OptionsSpec<GcsOptions>& Spec<GcsOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<GcsOptions>("GcsOptions"))
           .Add("endpoint", &GcsOptions::endpoint,
                "'http://host:port' of an emulator; empty: STORAGE_EMULATOR_HOST, else "
                "https://storage.googleapis.com.")
           .Add("access_token", &GcsOptions::access_token,
                "OAuth2 bearer token; empty: GOOGLE_OAUTH_ACCESS_TOKEN, else anonymous.");
  return *spec;
}

template <>
const OptionsSpec<S3Options>& Spec<S3Options>() {
  using O = S3Options;
  static const auto* spec =
      &(*new OptionsSpec<O>("S3Options"))
           .Add("endpoint", &O::endpoint,
                "'http://host:port' (path-style); empty: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, "
                "else AWS.")
           .Add("region", &O::region, "Empty: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1.")
           .Add("access_key_id", &O::access_key_id, "Empty: AWS_ACCESS_KEY_ID.")
           .Add("secret_access_key", &O::secret_access_key, "Empty: AWS_SECRET_ACCESS_KEY.")
           .Add("session_token", &O::session_token, "Empty: AWS_SESSION_TOKEN.")
           .Add("list_page_size", &O::list_page_size, "Keys per ListObjectsV2 page.");
  return *spec;
}

template <>
const OptionsSpec<JpegCropOptions>& Spec<JpegCropOptions>() {
  using O = JpegCropOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("JpegCropOptions"))
           .Add("min_height", &O::min_height,
                "Decode at the smallest DCT scale M/8 whose window still covers this size.")
           .Add("min_width", &O::min_width, "See min_height; 0 x 0 decodes at full scale.")
           .Add("channels", &O::channels, "Output channels: 3 = RGB, 1 = grayscale.")
           .Add("max_pixels", &O::max_pixels,
                "Larger images are RESOURCE_EXHAUSTED, checked before allocating.")
           .Add("fast_idct", &O::fast_idct, "Faster, slightly less accurate integer IDCT.")
           .Add("fast_upsample", &O::fast_upsample,
                "Chroma upsampled by replication instead of the triangle filter.");
  return *spec;
}

template <>
const OptionsSpec<RandomResizedCropOptions>& Spec<RandomResizedCropOptions>() {
  using O = RandomResizedCropOptions;
  static const auto* spec = [] {
    auto* s = new OptionsSpec<O>("RandomResizedCropOptions");
    s->Add("height", &O::height, "Output height (> 0).")
        .Add("width", &O::width, "Output width (> 0).")
        .Add("min_scale", &O::min_scale, "Crop area as a fraction of the image's: lower bound.")
        .Add("max_scale", &O::max_scale, "Upper bound of the area fraction (<= 1).")
        .Add("min_ratio", &O::min_ratio, "Crop width / height, log-uniform: lower bound.")
        .Add("max_ratio", &O::max_ratio, "Upper bound of the aspect ratio.")
        .Add("attempts", &O::attempts, "Draws before the centred fallback (>= 1).")
        .Add("flip_probability", &O::flip_probability,
             "Chance of mirroring left-right (fused, free).")
        .Add("dtype", &O::dtype,
             "'uint8', or 'float32' / 'float16' / 'bfloat16' normalized as below.")
        .Add("mean", &O::mean, "Float outputs: (pixel * scale - mean[c]) / stddev[c].")
        .Add("stddev", &O::stddev, "One value for all channels or one per channel.")
        .Add("scale", &O::scale, "See mean.")
        .Add("channels_first", &O::channels_first, "[C, H, W] (PyTorch's layout).")
        .AddNested("jpeg", &O::jpeg,
                   "JPEG input: channels, IDCT, upsampling, size limit (min_height/min_width "
                   "ignored).")
        .Add("dct_scaling", &O::dct_scaling,
             "JPEG input: decode at the smallest DCT scale that covers the output.")
        .Add("seed", &O::seed, "Seed; draws depend on (seed, source_index, repeat_index, epoch).")
        .Add("component", &O::component, "Which component of the Example.");
    return s;
  }();
  return *spec;
}

template <>
const OptionsSpec<ObjectStoreOptions>& Spec<ObjectStoreOptions>() {
  using O = ObjectStoreOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("ObjectStoreOptions"))
           .AddNested("retry", &O::retry, "When and how often requests are retried.")
           .AddNested("http", &O::http, "Concurrency, chunks, timeouts.")
           .AddNested("gcs", &O::gcs, "gs:// endpoint and token.")
           .AddNested("s3", &O::s3, "s3:// endpoint, region and keys.");
  return *spec;
}

template <>
const OptionsSpec<ThrottledStoreOptions>& Spec<ThrottledStoreOptions>() {
  using O = ThrottledStoreOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("ThrottledStoreOptions"))
           .Add("latency", &O::latency, "Added to every request before its first byte, seconds.")
           .Add("bytes_per_second", &O::bytes_per_second,
                "Cap on the bytes per second of all transfers together; 0 = none.")
           .Add("request_bytes", &O::request_bytes,
                "A reader pays the latency again after every this many bytes; 0 = once.");
  return *spec;
}

}  // namespace dataecho::python
