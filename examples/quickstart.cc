// Placeholder replaced by the pipeline quick start below once stages land.
#include <cstdio>
int main() { std::puts("dataecho"); return 0; }
