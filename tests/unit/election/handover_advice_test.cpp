// The advice preemption::advise gives: a wait completes with the successor of its own term, at
// once when the advice came first, with not_leader once that leadership is over, and with
// stopped when the elector goes away.
#include "handover_advice.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <string>

namespace s3lect::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

struct outcome {
  int calls = 0;
  error_code ec;
  std::string successor;
};

struct record_into {
  outcome* o;
  void operator()(error_code ec, std::string successor) const {
    ++o->calls;
    o->ec = ec;
    o->successor = std::move(successor);
  }
};

TEST(HandoverAdvice, AWaitCompletesWithTheAdviceOfItsTermOnly) {
  asio::io_context io;
  handover_advice advice({io.get_executor(), io.get_executor()});
  outcome term3, term4;
  advice.wait(3, record_into{&term3});
  advice.wait(4, record_into{&term4});
  advice.advise(3, "node-b");
  io.poll();  // term4's wait is pending: outstanding work, so run() would not return
  EXPECT_EQ(term3.calls, 1);
  EXPECT_FALSE(term3.ec);
  EXPECT_EQ(term3.successor, "node-b");
  EXPECT_EQ(term4.calls, 0);
}

TEST(HandoverAdvice, AWaitAfterTheAdviceCompletesAtOnce) {
  asio::io_context io;
  handover_advice advice({io.get_executor(), io.get_executor()});
  advice.advise(7, "node-c");
  outcome late;
  advice.wait(7, record_into{&late});
  io.run();
  EXPECT_EQ(late.calls, 1);
  EXPECT_EQ(late.successor, "node-c");
}

TEST(HandoverAdvice, TheEndOfTheLeadershipCompletesWithNotLeader) {
  asio::io_context io;
  handover_advice advice({io.get_executor(), io.get_executor()});
  outcome pending, after_end, next_term;
  advice.wait(2, record_into{&pending});
  advice.wait(3, record_into{&next_term});
  advice.advise(2, "node-b");
  advice.ended(2);
  advice.wait(2, record_into{&after_end});  // the advice went with the leadership
  io.poll();                                // next_term's wait is pending
  EXPECT_EQ(pending.successor, "node-b");
  EXPECT_EQ(after_end.calls, 1);
  EXPECT_EQ(after_end.ec, errc::not_leader);
  EXPECT_EQ(next_term.calls, 0);
}

TEST(HandoverAdvice, FailAllCompletesWithStopped) {
  asio::io_context io;
  handover_advice advice({io.get_executor(), io.get_executor()});
  outcome waiting;
  advice.wait(1, record_into{&waiting});
  advice.fail_all();
  io.run();
  EXPECT_EQ(waiting.calls, 1);
  EXPECT_EQ(waiting.ec, errc::stopped);
}

}  // namespace
}  // namespace s3lect::detail
