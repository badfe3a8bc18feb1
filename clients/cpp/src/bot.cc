#include "cardshark/bot.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <thread>
#include <utility>

namespace cardshark {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

bool debug() { return std::getenv("CARDSHARK_DEBUG") != nullptr; }

}  // namespace

Options options_from_args(int argc, char** argv) {
  Options options;
  options.server = env_or("CARDSHARK_SERVER", kDefaultServer);
  options.token = env_or("CARDSHARK_TOKEN", "");
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
    } else {
      throw std::invalid_argument("unknown argument " + arg);
    }
  }
  return options;
}

BotClient::BotClient(Decide decide, Options options)
    : decide_(std::move(decide)), options_(std::move(options)) {
  channel_ = grpc::CreateChannel(options_.server, grpc::InsecureChannelCredentials());
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

bool BotClient::serve_once() {
  grpc::ClientContext context;
  auto stream = stub_->Play(&context);
  bool welcomed = false;
  if (stream->Write(hello())) {
    v1::RefereeMessage message;
    while (stream->Read(&message)) {
      if (message.kind_case() == v1::RefereeMessage::kRequest) {
        const v1::DecisionRequest& request = message.request();
        std::string action;
        try {
          action = decide_(request);
        } catch (const std::exception& err) {
          // unanswered: the referee charges a timeout and plays a fallback action
          std::cerr << "cardshark: decide failed on request " << request.request_id() << ": "
                    << err.what() << std::endl;
          continue;
        }
        v1::BotMessage answer;
        v1::Decision* decision = answer.mutable_decision();
        decision->set_request_id(request.request_id());
        decision->set_action_id(action);
        if (!stream->Write(answer)) break;
        continue;
      }
      if (message.kind_case() == v1::RefereeMessage::kWelcome) {
        welcomed = true;
        welcome_ = message.welcome();
      }
      if (options_.on_event) options_.on_event(message);
    }
  }
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  auto code = status.error_code();
  if (code == grpc::StatusCode::UNAUTHENTICATED ||
      code == grpc::StatusCode::FAILED_PRECONDITION) {
    throw BotRefused(status.error_message());
  }
  if (debug()) {
    std::cerr << "cardshark: stream ended (" << code << " " << status.error_message() << ")"
              << std::endl;
  }
  return welcomed;
}

void BotClient::run() {
  using Clock = std::chrono::steady_clock;
  bool lost = false;
  Clock::time_point lost_at;
  int delay_ms = 50;
  while (true) {
    if (serve_once()) {
      lost = false;
      delay_ms = 50;
    }
    auto now = Clock::now();
    if (!lost) {
      lost = true;
      lost_at = now;
    }
    auto gone = std::chrono::duration_cast<std::chrono::milliseconds>(now - lost_at).count();
    if (gone > options_.reconnect_ms) {
      if (debug()) std::cerr << "cardshark: server gone for " << gone << " ms; stopping\n";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms = std::min(delay_ms * 2, 1000);
  }
}

int run_bot(Decide decide, int argc, char** argv, const std::string& name,
            EventHandler on_event) {
  Options options;
  try {
    options = options_from_args(argc, argv);
  } catch (const std::invalid_argument& err) {
    std::cerr << "usage: " << argv[0] << " [--server HOST:PORT] [--token TOKEN]: " << err.what()
              << std::endl;
    return 2;
  }
  if (options.token.empty()) {
    std::cerr << "no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)"
              << std::endl;
    return 2;
  }
  options.name = name;
  options.on_event = std::move(on_event);
  BotClient client(std::move(decide), options);
  try {
    client.run();
  } catch (const BotRefused& err) {
    std::cerr << "refused by " << options.server << ": " << err.what() << std::endl;
    return 2;
  }
  return 0;
}

}  // namespace cardshark
