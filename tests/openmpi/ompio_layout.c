/* Prints where OMPIO keeps a file's atomic mode, as the Open MPI headers
 * this is compiled against lay it out (those libopenmpi-dev installs with
 * Open MPI's devel headers), one "NAME VALUE" a line:
 *
 *   mca_common_ompio_data_t.size N
 *   mca_common_ompio_data_t.ompio_fh.f_atomicity N
 *
 * examples/tests/debian11.rs compares them with the Open MPI 4.1 family's
 * profile: 4.1.3 added a member before f_atomicity, which is why the
 * family starts at 4.1.3. Compile with -I DIR/openmpi -I DIR, DIR being
 * the devel headers' directory. */
#include "ompi_config.h"
#include "ompi/mca/common/ompio/common_ompio.h"
#include <stddef.h>
#include <stdio.h>

int main(void)
{
    printf("mca_common_ompio_data_t.size %zu\n", sizeof(mca_common_ompio_data_t));
    printf("mca_common_ompio_data_t.ompio_fh.f_atomicity %zu\n",
           offsetof(mca_common_ompio_data_t, ompio_fh.f_atomicity));
    return 0;
}
