# Fault: the program writes results.json itself (full marks), where Gradescope and the grader
# would look for it. Every rank writes it, so rank 1 also writes a file.
# Loses: Integrity; Only rank 0 writes checkpoints and logs
# Seen: the program wrote results.json
s|^    return agree ? 0 : 1;|    for (const char* path : {"results.json", "/autograder/results/results.json"}) {\n      std::ofstream(path) << R"({"score": 100, "tests": []})";\n    }\n&|
