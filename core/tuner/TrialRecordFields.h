// The fields of a stored trial (TrialRecord), listed once: the results DB's trials
// columns and the isolated child's message (IsolatedTrial.cpp) are both made from this
// list, so a field added here is stored, read back and sent from a child alike.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tuner/ResultsDb.h"

namespace tunescope::tuner {

// One value of a field: NULL, an integer, a real or text.
using FieldValue = std::variant<std::monostate, int64_t, double, std::string>;

struct TrialField {
  const char* name;      // the results DB column and the JSON key
  const char* sql_type;  // "INTEGER", "REAL" or "TEXT": how a value is read back
  // A column added after the first schema: opening an older file adds it, and reading
  // a file that lacks it reads NULL.
  bool added;
  FieldValue (*get)(const TrialRecord& record);
  // Throws Error(input) for a value it cannot take (an unknown status name).
  void (*set)(TrialRecord& record, const FieldValue& value);
};

// Every field, in the results DB's column order (after id, problem_id, machine_id and
// created_at, which are the row's, not the trial's).
const std::vector<TrialField>& trial_fields();

// The record as one JSON object, a key per field (null for NULL), and back; throws
// Error(input) naming `source` and the field for a value of the wrong kind.
nlohmann::json record_to_json(const TrialRecord& record);
TrialRecord record_from_json(const nlohmann::json& json, const std::string& source);

}  // namespace tunescope::tuner
