// The owner of the test programs' precompiled header (tests/CMakeLists.txt, PLOTQ_PCH). An
// executable, so that the header is compiled exactly as the test programs' sources are (-fPIE, not
// a library's -fPIC: clang refuses a header compiled for another PIC level). Nothing runs it.
int main() { return 0; }
