// The trial fields' list (TrialRecordFields.h) and its JSON form.
#include "core/tuner/TrialRecordFields.h"

#include "core/base/Error.h"

namespace tunescope::tuner {

namespace {

std::optional<double> real_of(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}
double real_or_zero(const FieldValue& v) { return real_of(v).value_or(0); }
int64_t integer_or_zero(const FieldValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<int64_t>(*d);
  return 0;
}
std::string text_of(const FieldValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return {};
}
ConcurrencyFigures& concurrency(TrialRecord& r) {
  if (!r.concurrency) r.concurrency = ConcurrencyFigures{};
  return *r.concurrency;
}
// The interval's ends are stored only as a pair (NULL without one).
FieldValue interval_end(const TrialRecord& r, double value) {
  return r.figures.has_interval() ? FieldValue(value) : FieldValue();
}

// A single-layer trial's pass time (NULL for a whole config: no pass of its own).
template <size_t Pass>
TrialField layer_pass_field(const char* name) {
  return {name, "REAL", true,
          [](const TrialRecord& r) -> FieldValue {
            return r.layer_pass_ms[Pass] > 0 ? FieldValue(r.layer_pass_ms[Pass]) : FieldValue();
          },
          [](TrialRecord& r, const FieldValue& v) { r.layer_pass_ms[Pass] = real_or_zero(v); }};
}

const std::vector<TrialField> kFields = {
    {"config", "TEXT", false, [](const TrialRecord& r) -> FieldValue { return r.config_json; },
     [](TrialRecord& r, const FieldValue& v) { r.config_json = text_of(v); }},
    {"status", "TEXT", false,
     [](const TrialRecord& r) -> FieldValue { return to_string(r.status); },
     [](TrialRecord& r, const FieldValue& v) { r.status = parse_trial_status(text_of(v)); }},
    {"reason", "TEXT", false, [](const TrialRecord& r) -> FieldValue { return r.reason; },
     [](TrialRecord& r, const FieldValue& v) { r.reason = text_of(v); }},
    {"median_eps", "REAL", false,
     [](const TrialRecord& r) -> FieldValue { return r.figures.median_eps; },
     [](TrialRecord& r, const FieldValue& v) { r.figures.median_eps = real_or_zero(v); }},
    {"median_step_ms", "REAL", false,
     [](const TrialRecord& r) -> FieldValue { return r.figures.median_step_ms; },
     [](TrialRecord& r, const FieldValue& v) { r.figures.median_step_ms = real_or_zero(v); }},
    {"min_step_ms", "REAL", false,
     [](const TrialRecord& r) -> FieldValue { return r.figures.min_step_ms; },
     [](TrialRecord& r, const FieldValue& v) { r.figures.min_step_ms = real_or_zero(v); }},
    {"spread", "REAL", false, [](const TrialRecord& r) -> FieldValue { return r.figures.spread; },
     [](TrialRecord& r, const FieldValue& v) { r.figures.spread = real_or_zero(v); }},
    {"steps", "INTEGER", false, [](const TrialRecord& r) -> FieldValue { return r.figures.steps; },
     [](TrialRecord& r, const FieldValue& v) { r.figures.steps = integer_or_zero(v); }},
    {"kernels", "TEXT", false, [](const TrialRecord& r) -> FieldValue { return r.kernels_json; },
     [](TrialRecord& r, const FieldValue& v) { r.kernels_json = text_of(v); }},
    {"concurrent_share", "REAL", true,
     [](const TrialRecord& r) -> FieldValue {
       return r.concurrency ? FieldValue(r.concurrency->concurrent_share) : FieldValue();
     },
     [](TrialRecord& r, const FieldValue& v) {
       if (auto d = real_of(v)) concurrency(r).concurrent_share = *d;
     }},
    {"mean_in_flight", "REAL", true,
     [](const TrialRecord& r) -> FieldValue {
       return r.concurrency ? FieldValue(r.concurrency->mean_in_flight) : FieldValue();
     },
     [](TrialRecord& r, const FieldValue& v) {
       if (auto d = real_of(v)) concurrency(r).mean_in_flight = *d;
     }},
    {"eps_low", "REAL", true,
     [](const TrialRecord& r) { return interval_end(r, r.figures.eps_low); },
     [](TrialRecord& r, const FieldValue& v) { r.figures.eps_low = real_or_zero(v); }},
    {"eps_high", "REAL", true,
     [](const TrialRecord& r) { return interval_end(r, r.figures.eps_high); },
     [](TrialRecord& r, const FieldValue& v) { r.figures.eps_high = real_or_zero(v); }},
    layer_pass_field<0>("layer_fwd_ms"),
    layer_pass_field<1>("layer_bwd_data_ms"),
    layer_pass_field<2>("layer_bwd_filter_ms"),
    {"stop_rule", "TEXT", true,
     [](const TrialRecord& r) -> FieldValue { return to_string(r.figures.stop); },
     [](TrialRecord& r, const FieldValue& v) {
       if (std::holds_alternative<std::string>(v)) r.figures.stop = parse_stop_rule(text_of(v));
     }},
};

}  // namespace

const std::vector<TrialField>& trial_fields() { return kFields; }

nlohmann::json record_to_json(const TrialRecord& record) {
  nlohmann::json out = nlohmann::json::object();
  for (const TrialField& f : kFields)
    out[f.name] = std::visit(
        [](const auto& value) -> nlohmann::json {
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::monostate>)
            return nullptr;
          else
            return value;
        },
        f.get(record));
  return out;
}

TrialRecord record_from_json(const nlohmann::json& json, const std::string& source) {
  TrialRecord record;
  for (const TrialField& f : kFields) {
    const nlohmann::json& v = json.at(f.name);
    FieldValue value;
    if (v.is_string())
      value = v.get<std::string>();
    else if (v.is_number_integer())
      value = v.get<int64_t>();
    else if (v.is_number())
      value = v.get<double>();
    else if (!v.is_null())
      fail(ErrorKind::input, source, ": field ", f.name, ": not a number, text or null");
    try {
      f.set(record, value);
    } catch (const Error& e) {
      fail(ErrorKind::input, source, ": field ", f.name, ": ", e.what());
    }
  }
  return record;
}

}  // namespace tunescope::tuner
