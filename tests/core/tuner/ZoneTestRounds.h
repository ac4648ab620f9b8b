// Round series for the indifference zone's tests (RankingTest.cpp, PerLayerSettleTest.cpp):
// a fastest member and others given by their paired step-time ratios to it.
#pragma once

#include <cstddef>
#include <vector>

namespace tunescope::tuner::test_support {

// A member close to the fastest: 12 paired ratios from 0.91 to 1.122, 5 of them below 1
// (p = 0.309). Its one-sided zone bound is 0.9861 at alpha, below 0.98 at alpha / 2, and
// 0.9714 at alpha / 3.
inline std::vector<double> close_member_ratios() {
  return {0.91, 0.936, 0.962, 0.988, 0.996, 1.014, 1.032, 1.05, 1.068, 1.086, 1.104, 1.122};
}

// Member 0 at 10 ms in every round, then member i + 1 at 10 ms x ratios[i][r] in round r
// (every ratio series as long as the first).
inline std::vector<std::vector<double>> rounds_against_fastest(
    const std::vector<std::vector<double>>& ratios) {
  std::vector<std::vector<double>> rounds(ratios.size() + 1);
  for (std::size_t r = 0; r < (ratios.empty() ? 0 : ratios.front().size()); ++r) {
    rounds[0].push_back(0.010);
    for (std::size_t i = 0; i < ratios.size(); ++i) rounds[i + 1].push_back(0.010 * ratios[i][r]);
  }
  return rounds;
}

}  // namespace tunescope::tuner::test_support
