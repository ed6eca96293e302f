// Keeps the test-support library non-empty.
namespace dataecho::testing {
int support_anchor = 0;
}  // namespace dataecho::testing
