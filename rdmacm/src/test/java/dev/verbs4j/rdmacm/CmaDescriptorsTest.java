package dev.verbs4j.rdmacm;

import dev.verbs4j.bindings.rdma_core_h;
import dev.verbs4j.rdmacm.internal.Cma;
import dev.verbs4j.verbs.internal.Ibv;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every librdmacm function that {@link Cma} declares is bound with the generated bindings' own
 * descriptor (verbs keeps a copy, {@link Ibv#descriptor}, so that binding does not initialize the
 * function's holder class in the bindings, which would bind a second handle).
 */
class CmaDescriptorsTest {

    @Test
    void everyCmaFunctionHasTheGeneratedDescriptor() throws Exception {
        int n = 0;
        for (Field f : Cma.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == Cma.Fn.class) {
                String name = f.get(null).toString();
                FunctionDescriptor generated = (FunctionDescriptor) rdma_core_h.class.getMethod(name + "$descriptor").invoke(null);
                assertThat(Ibv.descriptor(name)).as(name).isEqualTo(generated);
                n++;
            }
        }
        assertThat(n).as("functions declared by Cma").isGreaterThanOrEqualTo(30);
    }
}
