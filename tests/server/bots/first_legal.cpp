// A bot for tests and benches, in C++ through the stdio bridge (clients/README.md).
#include <iostream>
#include <string>

// Through the stdio bridge: answer every request with its first legal action.
static std::string after(const std::string& line, const std::string& key, size_t from) {
    size_t at = line.find(key, from);
    if (at == std::string::npos) return "";
    at += key.size();
    while (at < line.size() && (line[at] == ' ' || line[at] == '"')) at++;
    size_t end = at;
    while (end < line.size() && line[end] != '"' && line[end] != ',' && line[end] != '}') end++;
    return line.substr(at, end - at);
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        size_t request = line.find("\"request\"");
        if (request == std::string::npos) continue;
        std::string id = after(line, "\"request_id\":", request);
        size_t legal = line.find("\"legal_actions\"", request);
        std::string action = after(line, "\"id\":", legal);
        std::cout << "{\"request_id\": \"" << id << "\", \"action_id\": \"" << action
                  << "\"}" << std::endl;
    }
}
