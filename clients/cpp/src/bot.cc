#include "cardshark/bot.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <utility>

namespace cardshark {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool debug() { return std::getenv("CARDSHARK_DEBUG") != nullptr; }

std::string read_pem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(std::string("cannot read ") + what + " " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Writes message as one frame on fd at once; 0, or the errno of the failed write.
// (SerializeDelimitedToFileDescriptor flushes in a destructor, so it cannot report one.)
int write_frame(const google::protobuf::MessageLite& message, int fd) {
  google::protobuf::io::FileOutputStream output(fd);
  if (google::protobuf::util::SerializeDelimitedToZeroCopyStream(message, &output) &&
      output.Flush()) {
    return 0;
  }
  return output.GetErrno() != 0 ? output.GetErrno() : EIO;
}

}  // namespace

Options options_from_args(int argc, char** argv) {
  Options options;
  options.server = env_or("CARDSHARK_SERVER", kDefaultServer);
  options.token = env_or("CARDSHARK_TOKEN", "");
  options.tls_ca = env_or("CARDSHARK_TLS_CA", "");
  options.tls_cert = env_or("CARDSHARK_TLS_CERT", "");
  options.tls_key = env_or("CARDSHARK_TLS_KEY", "");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    std::string flag = arg;
    auto eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::invalid_argument(arg + " needs a value");
    }
    if (flag == "--server") {
      options.server = value;
    } else if (flag == "--token") {
      options.token = value;
    } else if (flag == "--tls-ca") {
      options.tls_ca = value;
    } else if (flag == "--tls-cert") {
      options.tls_cert = value;
    } else if (flag == "--tls-key") {
      options.tls_key = value;
    } else {
      throw std::invalid_argument("unknown argument " + arg);
    }
  }
  return options;
}

int local_fd(const std::string& server) {
  if (server.rfind("fd:", 0) != 0) return -1;
  std::string number = server.substr(3);
  bool digits = !number.empty() && number.size() < 10 &&
                number.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    throw std::invalid_argument("bad server address " + server +
                                ": fd: takes a descriptor number, fd:3");
  }
  return std::stoi(number);
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const Options& options) {
  if (options.tls_ca.empty()) {
    if (!options.tls_cert.empty() || !options.tls_key.empty()) {
      throw std::invalid_argument("a client certificate needs a CA to trust: give --tls-ca too");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw std::invalid_argument("--tls-cert and --tls-key go together: give both or neither");
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = read_pem(options.tls_ca, "--tls-ca");
  if (!options.tls_cert.empty()) {
    ssl.pem_cert_chain = read_pem(options.tls_cert, "--tls-cert");
    ssl.pem_private_key = read_pem(options.tls_key, "--tls-key");
  }
  return grpc::SslCredentials(ssl);
}

BotClient::BotClient(Decide decide, Options options)
    : decide_(std::move(decide)), options_(std::move(options)) {
  if (local_fd(options_.server) >= 0) return;  // no channel: frames on the descriptor
  channel_ = grpc::CreateChannel(options_.server, channel_credentials(options_));
  stub_ = v1::Referee::NewStub(channel_);
}

v1::BotMessage BotClient::hello() const {
  v1::BotMessage message;
  v1::Hello* hello = message.mutable_hello();
  hello->set_token(options_.token);
  hello->set_bot_name(options_.name);
  hello->set_protocol_version(kProtocolVersion);
  for (const auto& game : options_.games) hello->add_games(game);
  return message;
}

bool BotClient::decide(const v1::DecisionRequest& request, v1::BotMessage* answer) {
  std::string action;
  try {
    action = decide_(request);
  } catch (const std::exception& err) {
    // unanswered: the referee charges a timeout and plays a fallback action
    std::cerr << "cardshark: decide failed on request " << request.request_id() << ": "
              << err.what() << std::endl;
    return false;
  }
  v1::Decision* decision = answer->mutable_decision();
  decision->set_request_id(request.request_id());
  decision->set_action_id(action);
  return true;
}

bool BotClient::on_message(const v1::RefereeMessage& message) {
  if (message.kind_case() == v1::RefereeMessage::kWelcome) welcome_ = message.welcome();
  if (message.kind_case() == v1::RefereeMessage::kGoodbye) {
    goodbye_ = message.goodbye();
    said_goodbye_ = true;
  }
  if (options_.on_event) options_.on_event(message);
  return said_goodbye_;
}

void BotClient::serve_local(int fd) {
  using google::protobuf::util::ParseDelimitedFromZeroCopyStream;
  // A write to a server that is gone must fail with EPIPE (the run ends with a line), not kill
  // the bot with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const std::string where = "fd:" + std::to_string(fd);
  bool welcomed = false;
  if (int err = write_frame(hello(), fd)) {
    ::close(fd);
    throw BotRefused("cannot use descriptor " + std::to_string(fd) + ": " + std::strerror(err));
  }
  google::protobuf::io::FileInputStream input(fd);
  v1::RefereeMessage message;
  bool clean_eof = false;
  while (true) {
    message.Clear();  // ParseDelimited... merges into what the message holds
    if (!ParseDelimitedFromZeroCopyStream(&message, &input, &clean_eof)) {
      if (clean_eof) {
        lost_ = "the server closed " + where;
      } else if (input.GetErrno() != 0) {
        lost_ = where + ": " + std::strerror(input.GetErrno());
      } else {
        lost_ = "a frame on " + where + " that does not parse";
      }
      break;
    }
    if (message.kind_case() == v1::RefereeMessage::kRequest) {
      v1::BotMessage answer;
      if (!decide(message.request(), &answer)) continue;
      if (int err = write_frame(answer, fd)) {
        lost_ = where + ": " + std::strerror(err);
        break;
      }
      continue;
    }
    if (message.kind_case() == v1::RefereeMessage::kWelcome) welcomed = true;
    if (on_message(message)) break;
  }
  ::close(fd);
  if (said_goodbye_) {
    lost_.clear();
  } else if (!welcomed) {
    throw BotRefused("the server closed descriptor " + std::to_string(fd) +
                     " without a Welcome (refused: its log says why)");
  }
}

bool BotClient::serve_once() {
  grpc::ClientContext context;
  auto stream = stub_->Play(&context);
  bool welcomed = false;
  if (stream->Write(hello())) {
    v1::RefereeMessage message;
    while (stream->Read(&message)) {
      if (message.kind_case() == v1::RefereeMessage::kRequest) {
        v1::BotMessage answer;
        if (!decide(message.request(), &answer)) continue;
        if (!stream->Write(answer)) break;
        continue;
      }
      if (message.kind_case() == v1::RefereeMessage::kWelcome) welcomed = true;
      if (on_message(message)) {
        // the last message: nothing more to play; do not wait for the server to end the stream
        context.TryCancel();
        break;
      }
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  auto code = status.error_code();
  if (said_goodbye_) return welcomed;
  if (code == grpc::StatusCode::UNAUTHENTICATED ||
      code == grpc::StatusCode::FAILED_PRECONDITION) {
    throw BotRefused(status.error_message());
  }
  if (debug()) {
    std::cerr << "cardshark: stream ended (" << code << " " << status.error_message() << ")"
              << std::endl;
  }
  ended_ = status.ok() ? "the stream ended" : status.error_message();
  return welcomed;
}

void BotClient::run() {
  int fd = local_fd(options_.server);
  if (fd >= 0) {
    serve_local(fd);
    return;
  }
  using Clock = std::chrono::steady_clock;
  bool lost = false;
  Clock::time_point lost_at;
  int delay_ms = 50;
  while (true) {
    if (serve_once()) {
      lost = false;
      delay_ms = 50;
    }
    if (said_goodbye_) return;
    auto now = Clock::now();
    if (!lost) {  // one line an outage, not one an attempt
      lost = true;
      lost_at = now;
      std::cerr << retry_line(options_.server, unreachable_reason(ended_),
                              options_.reconnect_ms / 1000.0)
                << std::endl;
    }
    auto gone = std::chrono::duration_cast<std::chrono::milliseconds>(now - lost_at).count();
    if (gone > options_.reconnect_ms) {
      if (debug()) std::cerr << "cardshark: server gone for " << gone << " ms; stopping\n";
      gave_up_ = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms = std::min(delay_ms * 2, 1000);
  }
}

std::string goodbye_line(const std::string& reason) {
  std::string said;
  std::istringstream words(reason);
  for (std::string word; words >> word;) said += (said.empty() ? "" : " ") + word;
  if (said.empty()) said = "the server said goodbye";
  return "cardshark: " + said + "; nothing more to play";
}

std::string lost_line(const std::string& why) {
  return "cardshark: " + why + " without a Goodbye; stopping";
}

namespace {

std::string seconds_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::string retry_line(const std::string& server, const std::string& why, double seconds) {
  return "cardshark: cannot reach " + server + " (" + why + "); retrying for up to " +
         seconds_text(seconds) + " s";
}

std::string gave_up_line(const std::string& server, double seconds) {
  return "cardshark: cannot reach " + server + " for " + seconds_text(seconds) + " s; stopping";
}

std::string unreachable_reason(const std::string& details) {
  const std::string text = lowercase(details);
  for (const char* known : {"connection refused", "connection reset", "socket closed"}) {
    if (text.find(known) != std::string::npos) return known;
  }
  std::string said;
  std::istringstream words(details);
  for (std::string word; words >> word;) said += (said.empty() ? "" : " ") + word;
  return said.empty() ? "no reason given" : said;
}

int run_bot(Decide decide, int argc, char** argv, const std::string& name,
            EventHandler on_event) {
  Options options;
  try {
    options = options_from_args(argc, argv);
    local_fd(options.server);
  } catch (const std::invalid_argument& err) {
    std::cerr << "usage: " << argv[0]
              << " [--server HOST:PORT] [--token TOKEN] [--tls-ca CA] [--tls-cert C --tls-key K]: "
              << err.what() << std::endl;
    return 2;
  }
  if (options.token.empty()) {
    std::cerr << "no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)"
              << std::endl;
    return 2;
  }
  options.name = name;
  options.on_event = std::move(on_event);
  std::unique_ptr<BotClient> made;
  try {
    made = std::make_unique<BotClient>(std::move(decide), options);
  } catch (const std::invalid_argument& err) {
    std::cerr << "cannot start the bot: " << err.what() << std::endl;
    return 2;
  }
  BotClient& client = *made;
  try {
    client.run();
  } catch (const BotRefused& err) {
    std::cerr << "refused by " << options.server << ": " << err.what() << std::endl;
    return 2;
  }
  if (client.said_goodbye()) std::cerr << goodbye_line(client.goodbye().reason()) << std::endl;
  if (!client.lost().empty()) {
    std::cerr << lost_line(client.lost()) << std::endl;
    return 1;
  }
  if (client.gave_up()) {
    std::cerr << gave_up_line(options.server, options.reconnect_ms / 1000.0) << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace cardshark
