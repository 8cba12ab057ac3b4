// The umbrella header: everything a user of s3lect needs. Includes no Beast, OpenSSL or
// Boost.JSON, so a translation unit including it compiles in seconds.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/azure_blob_client.hpp>
#include <s3lect/completion_token.hpp>
#include <s3lect/config.hpp>
#include <s3lect/core_dumps.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/elector_counters.hpp>
#include <s3lect/error.hpp>
#include <s3lect/fenced_object.hpp>
#include <s3lect/file_descriptors.hpp>
#include <s3lect/health.hpp>
#include <s3lect/leader_endpoint.hpp>
#include <s3lect/leadership.hpp>
#include <s3lect/liveness.hpp>
#include <s3lect/logger.hpp>
#include <s3lect/memory_storage.hpp>
#include <s3lect/metrics.hpp>
#include <s3lect/metrics_server.hpp>
#include <s3lect/record.hpp>
#include <s3lect/response_info.hpp>
#include <s3lect/retry.hpp>
#include <s3lect/s3_client.hpp>
#include <s3lect/server_stats.hpp>
#include <s3lect/storage.hpp>
#include <s3lect/store_clock_offset.hpp>
#include <s3lect/store_error.hpp>
#include <s3lect/term_guard.hpp>
#include <s3lect/tls.hpp>
#include <s3lect/version.hpp>
