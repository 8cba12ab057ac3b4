// The Beast body types of the HTTP client: a request body that is a string followed by a file
// read in chunks, and a reply body that is kept (bounded, or truncated at the bound) or handed
// to a sink chunk by chunk. Included by http_client.cpp only (Beast stays in one client TU).
#pragma once

#include <s3lect/error.hpp>

#include "beast_names.hpp"
#include "http_client.hpp"

#include <boost/beast/core/file.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional/optional.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace s3lect::inline v1::detail {

/// A request body: `head`, then `file_size` bytes of `file_path` from `file_offset` on (when
/// set).
struct spliced_body {
  struct value_type {
    std::string head;
    std::string file_path;
    std::uint64_t file_size = 0;
    std::uint64_t file_offset = 0;
    std::function<void()> on_progress;
  };

  static std::uint64_t size(const value_type& body) { return body.head.size() + body.file_size; }

  class writer {
   public:
    using const_buffers_type = asio::const_buffer;

    template <bool isRequest, class Fields>
    writer(const http::header<isRequest, Fields>&, const value_type& body) : body_(body) {}

    void init(error_code& ec) {
      ec = {};
      remaining_ = body_.file_size;
      if (remaining_ == 0) return;
      file_.open(body_.file_path.c_str(), beast::file_mode::scan, ec);
      if (!ec && body_.file_offset > 0) file_.seek(body_.file_offset, ec);
      chunk_ = std::make_unique<char[]>(chunk_bytes);
    }

    boost::optional<std::pair<const_buffers_type, bool>> get(error_code& ec) {
      ec = {};
      if (!head_sent_) {
        head_sent_ = true;
        if (!body_.head.empty()) {
          return std::pair{const_buffers_type(body_.head.data(), body_.head.size()),
                           remaining_ > 0};
        }
      }
      if (remaining_ == 0) return boost::none;
      const std::size_t wanted =
          static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, chunk_bytes));
      const std::size_t got = file_.read(chunk_.get(), wanted, ec);
      if (ec) return boost::none;
      if (got == 0) {
        // The file shrank since its size was taken: the request cannot be completed.
        ec = make_error_code(boost::system::errc::io_error);
        return boost::none;
      }
      remaining_ -= got;
      if (body_.on_progress) body_.on_progress();
      return std::pair{const_buffers_type(chunk_.get(), got), remaining_ > 0};
    }

   private:
    static constexpr std::size_t chunk_bytes = 64 * 1024;
    const value_type& body_;
    beast::file file_;
    std::unique_ptr<char[]> chunk_;
    std::uint64_t remaining_ = 0;
    bool head_sent_ = false;
  };
};

/// A reply body: kept in `text` up to `limit` bytes (beyond it the read fails with
/// http::error::body_limit, or with `truncate` stops there and sets `truncated`), or, for a
/// 2xx reply when `sink` is set, handed to the sink without limit.
struct reply_body {
  struct value_type {
    std::string text;
    std::size_t limit = 0;
    bool truncate = false;
    bool truncated = false;
    reply_chunk_sink sink;
    std::function<void()> on_progress;
    error_code sink_error;  ///< what the sink refused with
  };

  class reader {
   public:
    // Beast constructs the reader with the parser, before the header is read: the status is
    // known in init().
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>& header, value_type& body)
        : status_([&header] { return header.result_int(); }), body_(body) {}

    void init(const boost::optional<std::uint64_t>&, error_code& ec) {
      ec = {};
      streaming_ = body_.sink && status_() / 100 == 2;
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
      ec = {};
      std::size_t taken = 0;
      for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
           ++it) {
        const std::string_view chunk(static_cast<const char*>(it->data()), it->size());
        taken += chunk.size();
        if (streaming_) {
          body_.sink_error = body_.sink(chunk);
          ec = body_.sink_error;
        } else {
          keep(chunk, ec);
        }
        if (ec) return taken;
      }
      if (body_.on_progress) body_.on_progress();
      return taken;
    }

    void finish(error_code& ec) { ec = {}; }

   private:
    void keep(std::string_view chunk, error_code& ec) {
      const std::size_t room = body_.limit - std::min(body_.limit, body_.text.size());
      if (chunk.size() <= room) {
        body_.text.append(chunk);
        return;
      }
      body_.text.append(chunk.substr(0, room));
      if (body_.truncate) {
        body_.truncated = true;
        ec = errc::body_too_large;
      } else {
        ec = http::error::body_limit;
      }
    }

    std::function<unsigned()> status_;
    value_type& body_;
    bool streaming_ = false;
  };
};

}  // namespace s3lect::inline v1::detail
