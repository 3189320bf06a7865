// A shared library that is not a plugin: it has no entry points.
extern "C" int not_a_plugin_answer() {
  return 42;
}
