// The cardshark C++ bot kit: write one function from a DecisionRequest to an action id.
//
//   #include "cardshark/bot.h"
//   int main(int argc, char** argv) {
//     return cardshark::run_bot(
//         [](const cardshark::v1::DecisionRequest& r) { return r.legal_actions(0).id(); },
//         argc, argv, "first-legal");
//   }
//
// The client connects, says Hello, answers every request with its request id and
// reconnects with backoff after a lost stream. The messages are the generated ones of
// proto/cardshark/v1 (cardshark/v1/referee.pb.h): request.knaves(), request.legal_actions()…
//
// A Goodbye from the server (tournament finished, server shutting down) ends run(): then
// said_goodbye() is true, and run_bot prints one line saying so to stderr and returns 0.
//
// The server is HOST:PORT or unix:/PATH, or fd:N for the local transport: a bot the server
// starts itself inherits one end of a socket pair as descriptor N (CARDSHARK_SERVER=fd:3) and
// speaks the same messages on it as frames, each preceded by its length as a varint (protobuf's
// "delimited" format), with no gRPC. The descriptor is the one way in: its end is the end of
// play (lost() says why; run_bot prints one line and returns 1), never a reconnect.
// docs/protocol.md §1.2 is the spec.
//
// With a CA (--tls-ca / CARDSHARK_TLS_CA) the bot
// speaks TLS and checks the server's certificate against it; --tls-cert/--tls-key
// (CARDSHARK_TLS_CERT / CARDSHARK_TLS_KEY) add a client certificate for mutual TLS.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <grpcpp/security/credentials.h>

#include "cardshark/v1/referee.grpc.pb.h"
#include "cardshark/v1/referee.pb.h"

namespace cardshark {

constexpr int kProtocolVersion = 1;
constexpr const char* kDefaultServer = "127.0.0.1:50051";

// decide returns the id of one of request.legal_actions().
using Decide = std::function<std::string(const v1::DecisionRequest& request)>;
// An event: welcome, match_started, hand_ended, match_ended, fault or goodbye.
using EventHandler = std::function<void(const v1::RefereeMessage& event)>;

struct Options {
  std::string server = kDefaultServer;
  std::string token;
  std::string name;
  std::vector<std::string> games;  // empty: every game
  EventHandler on_event;
  int reconnect_ms = 30000;  // give up when the server is gone this long
  std::string tls_ca;        // PEM file of the CA to trust: TLS when set, else insecure
  std::string tls_cert;      // PEM client certificate (mutual TLS), with tls_key
  std::string tls_key;       // PEM key of tls_cert
};

// The server refused the bot (bad token or protocol version); retrying will not help.
class BotRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --server HOST:PORT / --token TOKEN / --tls-ca / --tls-cert / --tls-key, else
// CARDSHARK_SERVER / CARDSHARK_TOKEN / CARDSHARK_TLS_CA / _CERT / _KEY, else defaults.
// Throws std::invalid_argument on an unknown flag.
Options options_from_args(int argc, char** argv);

// The descriptor of a server address fd:N (the local transport), else -1.
// Throws std::invalid_argument on fd: without a number.
int local_fd(const std::string& server);

// The channel credentials options ask for: TLS with their CA, else insecure.
// Throws std::invalid_argument when a file cannot be read or a cert lacks its key.
std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const Options& options);

// A bot's connection to a cardshark server.
class BotClient {
 public:
  BotClient(Decide decide, Options options);

  // Serve until the server says Goodbye, or is gone for longer than reconnect_ms (over the
  // local transport: until its connection ends, then lost() says why); throws BotRefused.
  void run();

  // The Hello sent first on every stream.
  v1::BotMessage hello() const;

  // The Welcome of the last accepted stream.
  const v1::Welcome& welcome() const { return welcome_; }

  // True once the server said Goodbye (its reason in goodbye()): nothing more to play.
  bool said_goodbye() const { return said_goodbye_; }
  const v1::Goodbye& goodbye() const { return goodbye_; }

  // Why the local connection ended without a Goodbye; empty otherwise.
  const std::string& lost() const { return lost_; }

  // True when run() returned because the server was out of reach for reconnect_ms.
  bool gave_up() const { return gave_up_; }

 private:
  bool serve_once();        // true once the stream was welcomed
  void serve_local(int fd);  // the whole run over the local transport
  // Handles a message other than a request; true on the Goodbye (the last message).
  bool on_message(const v1::RefereeMessage& message);
  // The Decision answering request, or false when decide threw (the request stays unanswered).
  bool decide(const v1::DecisionRequest& request, v1::BotMessage* answer);

  Decide decide_;
  Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Referee::Stub> stub_;
  v1::Welcome welcome_;
  v1::Goodbye goodbye_;
  bool said_goodbye_ = false;
  std::string lost_;
  std::string ended_;  // why the last stream ended (gRPC's status message)
  bool gave_up_ = false;
};

// The one line a kit prints when the server says Goodbye.
std::string goodbye_line(const std::string& reason);

// The one line a kit prints when its local connection ends without a Goodbye.
std::string lost_line(const std::string& why);

// The one line a kit prints when it cannot reach the server and starts retrying.
std::string retry_line(const std::string& server, const std::string& why, double seconds);

// The one line a kit prints when it stops retrying.
std::string gave_up_line(const std::string& server, double seconds);

// gRPC's account of a failed connection, short: "connection refused" rather than its
// "failed to connect to all addresses; last error: ... Connection refused".
std::string unreachable_reason(const std::string& details);

// main() in one call: options from argv and the environment, run, and an exit code
// (0 after a Goodbye, 1 when the local connection ended without a Goodbye or the server
// stayed out of reach for reconnect_ms, 2 when refused or misconfigured).
int run_bot(Decide decide, int argc, char** argv, const std::string& name = "",
            EventHandler on_event = nullptr);

}  // namespace cardshark
