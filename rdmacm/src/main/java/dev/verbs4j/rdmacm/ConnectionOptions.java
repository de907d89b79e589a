package dev.verbs4j.rdmacm;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * How an {@link RdmaConnection} is sized and set up: the message size and ring depths of the
 * registered buffers the connection owns, how long {@link RdmaConnection#close()} lingers for
 * sends still in flight, the private data sent with a connect (or an accept), and the receive
 * side's RNR timer. An immutable value: the {@code with…} methods return a changed copy.
 *
 * <p>A connection registers {@code maxMessageSize × sendDepth} bytes for sending and {@code
 * maxMessageSize × (receiveDepth + 1)} bytes for receiving (one receive is reserved for the flow
 * control's credit updates), in two memory regions it owns and frees on close.
 *
 * @param maxMessageSize the largest message, in bytes (1 .. 1 GiB); both peers should agree:
 *                       a message larger than the receiver's slots breaks the connection
 *                       (the receiver sees a local length error)
 * @param sendDepth      how many sends may be in flight (1 .. 4096): a send blocks (or {@code
 *                       trySend} fails) while all are
 * @param receiveDepth   how many receives are kept posted for messages (1 .. 4096): how many
 *                       messages the peer may send before this side reads; the peer's sends
 *                       wait for credits beyond that (see {@link RdmaConnection}'s flow control)
 * @param linger         how long {@code close()} waits for sends in flight before it
 *                       disconnects (zero: not at all)
 * @param privateData    bytes sent to the peer with the connect or the accept (at most 56 on a
 *                       connect, 196 on an accept over RoCE); the peer reads them in {@link
 *                       RdmaConnection#peerPrivateData()}, zero-padded by the transport
 * @param minRnrTimer    the RNR NAK timer code (1–31; IB encoding, 12 = 0.64 ms) this side's
 *                       queue pair announces to a sender that finds no receive posted; only a
 *                       backstop, since the credits keep a receive posted for every message;
 *                       in an endpoint group with a shared receive queue, the pace at which
 *                       senders retry while the shared slots are used up
 * @param ackTimeout     the local ACK timeout code of this side's queue pair (4.096 µs ×
 *                       2^code, 1–31; {@code RDMA_OPTION_ID_ACK_TIMEOUT}), or 0 for the
 *                       connection manager's default: how long a request waits for its ACK
 *                       before it is sent again. Raise it where the peer can be slow to answer
 *                       (an emulated or heavily loaded host) to avoid needless retransmissions
 * @param postedReceives whether messages arrive in buffers the application posts ({@link
 *                       RdmaConnection#postReceive}, zero-copy) instead of the connection's
 *                       receive ring (copied out by {@code receive}); see {@link RdmaConnection}
 */
public record ConnectionOptions(int maxMessageSize, int sendDepth, int receiveDepth, Duration linger, byte[] privateData,
                                int minRnrTimer, int ackTimeout, boolean postedReceives) {

    /** 64 KiB messages, 16 sends in flight, 16 receives posted, 2 s linger, no private data, RNR timer 0.64 ms, the CM's ACK timeout. */
    public static final ConnectionOptions DEFAULT = new ConnectionOptions(64 * 1024, 16, 16, Duration.ofSeconds(2), new byte[0], 12, 0,
            false);

    public ConnectionOptions {
        if (maxMessageSize < 1 || maxMessageSize > (1 << 30)) {
            throw new IllegalArgumentException("maxMessageSize must be 1 .. 1 GiB, got " + maxMessageSize);
        }
        if (sendDepth < 1 || sendDepth > 4096 || receiveDepth < 1 || receiveDepth > 4096) {
            throw new IllegalArgumentException("sendDepth and receiveDepth must be 1 .. 4096, got " + sendDepth + ", " + receiveDepth);
        }
        Objects.requireNonNull(linger, "linger");
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, got " + linger);
        }
        privateData = privateData == null ? new byte[0] : privateData.clone();
        if (privateData.length > 196) {
            throw new IllegalArgumentException("private data of " + privateData.length + " bytes: at most 196 (56 on a connect)");
        }
        if (minRnrTimer < 1 || minRnrTimer > 31) {
            throw new IllegalArgumentException("minRnrTimer must be 1 .. 31, got " + minRnrTimer);
        }
        if (ackTimeout < 0 || ackTimeout > 31) {
            throw new IllegalArgumentException("ackTimeout must be 0 (the default) or 1 .. 31, got " + ackTimeout);
        }
    }

    /** Options that receive into the connection's ring ({@code postedReceives} false). */
    public ConnectionOptions(int maxMessageSize, int sendDepth, int receiveDepth, Duration linger, byte[] privateData,
                             int minRnrTimer, int ackTimeout) {
        this(maxMessageSize, sendDepth, receiveDepth, linger, privateData, minRnrTimer, ackTimeout, false);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** A copy with this message size. */
    public ConnectionOptions withMaxMessageSize(int size) {
        return new ConnectionOptions(size, sendDepth, receiveDepth, linger, privateData, minRnrTimer, ackTimeout, postedReceives);
    }

    /** A copy with these ring depths. */
    public ConnectionOptions withDepths(int sends, int receives) {
        return new ConnectionOptions(maxMessageSize, sends, receives, linger, privateData, minRnrTimer, ackTimeout, postedReceives);
    }

    /** A copy with this linger time. */
    public ConnectionOptions withLinger(Duration time) {
        return new ConnectionOptions(maxMessageSize, sendDepth, receiveDepth, time, privateData, minRnrTimer, ackTimeout, postedReceives);
    }

    /** A copy with this private data. */
    public ConnectionOptions withPrivateData(byte[] data) {
        return new ConnectionOptions(maxMessageSize, sendDepth, receiveDepth, linger, data, minRnrTimer, ackTimeout, postedReceives);
    }

    /** A copy with this RNR timer code. */
    public ConnectionOptions withMinRnrTimer(int code) {
        return new ConnectionOptions(maxMessageSize, sendDepth, receiveDepth, linger, privateData, code, ackTimeout, postedReceives);
    }

    /** A copy that receives into posted buffers ({@code true}) or into the connection's ring. */
    public ConnectionOptions withPostedReceives(boolean posted) {
        return new ConnectionOptions(maxMessageSize, sendDepth, receiveDepth, linger, privateData, minRnrTimer, ackTimeout, posted);
    }

    /** A copy with this ACK timeout code (0: the connection manager's default). */
    public ConnectionOptions withAckTimeout(int code) {
        return new ConnectionOptions(maxMessageSize, sendDepth, receiveDepth, linger, privateData, minRnrTimer, code, postedReceives);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionOptions c && maxMessageSize == c.maxMessageSize && sendDepth == c.sendDepth
                && receiveDepth == c.receiveDepth && linger.equals(c.linger) && Arrays.equals(privateData, c.privateData)
                && minRnrTimer == c.minRnrTimer && ackTimeout == c.ackTimeout && postedReceives == c.postedReceives;
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxMessageSize, sendDepth, receiveDepth, linger, minRnrTimer, ackTimeout, postedReceives) * 31
                + Arrays.hashCode(privateData);
    }

    @Override
    public String toString() {
        return "ConnectionOptions[maxMessageSize=" + maxMessageSize + ", sendDepth=" + sendDepth + ", receiveDepth="
                + receiveDepth + ", linger=" + linger + ", privateData=" + privateData.length + " bytes, minRnrTimer="
                + minRnrTimer + ", ackTimeout=" + ackTimeout + (postedReceives ? ", postedReceives" : "") + "]";
    }
}
