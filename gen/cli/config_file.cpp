#include "cli/config_file.hpp"

#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

namespace kaleido::cli {

namespace {

std::string scalar(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

void flatten(const nlohmann::json& obj, std::vector<std::string>& parents, std::vector<CLI::ConfigItem>& out) {
  for (const auto& [key, value] : obj.items()) {
    if (value.is_object()) {
      parents.push_back(key);
      flatten(value, parents, out);
      parents.pop_back();
      continue;
    }
    CLI::ConfigItem item;
    item.parents = parents;
    item.name = key;
    if (value.is_array()) {
      std::string joined;  // lists become one comma-separated value, as on the command line
      for (const auto& e : value) joined += (joined.empty() ? "" : ",") + scalar(e);
      item.inputs.push_back(joined);
    } else {
      item.inputs.push_back(scalar(value));
    }
    out.push_back(std::move(item));
  }
}

}  // namespace

std::vector<CLI::ConfigItem> JsonOrTomlConfig::from_config(std::istream& input) const {
  std::stringstream buffer;
  buffer << input.rdbuf();
  const std::string text = buffer.str();
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    std::istringstream toml(text);
    return CLI::ConfigTOML::from_config(toml);
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CLI::ConversionError(std::string("config file is not valid JSON: ") + e.what());
  }
  std::vector<CLI::ConfigItem> result;
  std::vector<std::string> parents;
  flatten(j, parents, result);
  return result;
}

void add_config_option(CLI::App& app) {
  app.config_formatter(std::make_shared<JsonOrTomlConfig>());
  app.set_config("--config", "", "Read options from a TOML or JSON file; command-line values override it");
}

}  // namespace kaleido::cli
