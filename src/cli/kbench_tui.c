#include "../core/kb.h"
int main(void) { return 0; }
