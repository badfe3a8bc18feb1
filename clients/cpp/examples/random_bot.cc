// A cardshark bot that plays a uniformly random legal action in every game.
// Run: CARDSHARK_SERVER=host:port CARDSHARK_TOKEN=... clients/cpp/build/random_bot
#include <random>
#include <string>

#include "cardshark/bot.h"

int main(int argc, char** argv) {
  std::mt19937 rng(std::random_device{}());
  auto decide = [&rng](const cardshark::v1::DecisionRequest& request) -> std::string {
    std::uniform_int_distribution<int> pick(0, request.legal_actions_size() - 1);
    return request.legal_actions(pick(rng)).id();
  };
  return cardshark::run_bot(decide, argc, argv, "random-cpp");
}
