# Fault: the program writes results.json itself (full marks), where Gradescope and the grader
# would look for it.
# Loses: Integrity
# Seen: the program wrote results.json
s|^    return agree ? 0 : 1;|    for (const char* path : {"results.json", "/autograder/results/results.json"}) {\n      std::ofstream(path) << R"({"score": 100, "tests": []})";\n    }\n&|
