#pragma once
// Detections: a shift seen between two measured heads, confirmed or rejected by interleaved reruns.

#include "base/error.hpp"
#include "storage/rows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bisectd::storage {

class DetectionStore {
public:
  virtual ~DetectionStore() = default;
  virtual Result<std::int64_t> add_detection(const DetectionRow& detection) = 0;
  virtual Result<std::optional<DetectionRow>> detection(const std::string& tree, const std::string& job,
                                                        const std::string& good, const std::string& bad) = 0;
  virtual Result<std::vector<DetectionRow>> detections_in_state(DetectionState state) = 0;
  // Every detection (of `tree` unless empty), newest first.
  virtual Result<std::vector<DetectionRow>> detections(const std::string& tree = "") = 0;
  // `change`, when given, replaces the detection's measured relative change (the confirmation's estimate).
  virtual Status set_detection_state(std::int64_t id, DetectionState state, std::int64_t bisection_id,
                                     std::optional<double> change = std::nullopt) = 0;
  // Stores a decision on detection `d.id`: its state, bisection, change, p value, rewrite, base, note and request.
  virtual Status update_detection(const DetectionRow& d) = 0;
};

} // namespace bisectd::storage
