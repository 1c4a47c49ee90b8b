// JsonContains: the comparison json_expect (and so the VM topology tests)
// makes between a pattern and a program's JSON output.
//
// "expected" is a pattern that the actual document must contain:
//  - object: each member of `expected` must exist in `actual` and match;
//    `actual` may have more members;
//  - array: same length, elements matched pairwise;
//  - number: equal value (20480 matches 20480.0);
//  - null, bool, string: equal.
// Every mismatch comes back as "PATH: message", PATH like $.nodes[1].cpus,
// in the pattern's member order.

#ifndef HOTPAGE_TESTS_VM_JSON_CONTAINS_H_
#define HOTPAGE_TESTS_VM_JSON_CONTAINS_H_

#include <string>
#include <vector>

#include "tools/base/json.h"

namespace hotpage {

// Empty when `actual` contains `expected`.
std::vector<std::string> JsonContains(const Json& expected, const Json& actual,
                                      const std::string& path = "$");

}  // namespace hotpage

#endif  // HOTPAGE_TESTS_VM_JSON_CONTAINS_H_
