/* cachet.c: the command-line tool (argument parsing and library calls only). */
#include "cachet.h"

#include <stdio.h>

int main(void)
{
	printf("cachet %s\n", CACHET_VERSION);
	return 0;
}
