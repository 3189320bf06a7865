// dstudio-probe: the dataset reader process (dstudio/data/reader_process.h). The studio's programs
// run it; it is not a command for users.

#include "dstudio/data/reader_process.h"

int main(int argc, char** argv) {
  return dstudio::data::reader_process_main(argc, argv);
}
