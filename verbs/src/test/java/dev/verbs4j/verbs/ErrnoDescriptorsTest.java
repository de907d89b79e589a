package dev.verbs4j.verbs;

import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.verbs.internal.Ibv;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The descriptors that {@link Ibv#withErrno} binds the libibverbs functions with are the generated
 * bindings' own (which a bindings test holds against gcc): verbs keeps a copy so that binding a
 * function does not initialize its holder class in the bindings, which would bind a second handle.
 * The librdmacm functions are checked in rdmacm, against every function its Cma declares.
 */
class ErrnoDescriptorsTest {

    /** Every libibverbs function verbs binds by name through {@link Ibv#withErrno}. */
    private static final List<String> VERBS = List.of("ibv_alloc_pd", "ibv_reg_mr", "ibv_reg_mr_iova2",
            "ibv_create_comp_channel", "ibv_create_cq", "ibv_create_qp", "ibv_create_ah", "ibv_create_ah_from_wc",
            "ibv_get_cq_event", "ibv_rereg_mr", "ibv_create_srq", "ibv_get_async_event", "ibv_get_device_list",
            "ibv_open_device", "ibv_query_gid", "ibv_query_pkey");

    @Test
    void verbsDescriptorsAreTheGeneratedOnes() throws Exception {
        for (String name : VERBS) {
            FunctionDescriptor generated = (FunctionDescriptor) rdma_core_h.class.getMethod(name + "$descriptor").invoke(null);
            assertThat(Ibv.descriptor(name)).as(name).isEqualTo(generated);
        }
    }

    @Test
    void anUnknownNameIsRefusedWithItsName() {
        assertThatThrownBy(() -> Ibv.descriptor("ibv_no_such_verb")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_no_such_verb");
    }
}
