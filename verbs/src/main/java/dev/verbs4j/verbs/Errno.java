package dev.verbs4j.verbs;

/**
 * Linux errno values as the verbs report them: symbolic names and the C library's messages.
 * Pure data; owns no native memory.
 */
public final class Errno {
    /** Operation not permitted. */
    public static final int EPERM = 1;
    /** No such file or directory. */
    public static final int ENOENT = 2;
    /** Interrupted system call. */
    public static final int EINTR = 4;
    /** Input/output error. */
    public static final int EIO = 5;
    /** Resource temporarily unavailable. */
    public static final int EAGAIN = 11;
    /** Cannot allocate memory. */
    public static final int ENOMEM = 12;
    /** Permission denied. */
    public static final int EACCES = 13;
    /** Bad address. */
    public static final int EFAULT = 14;
    /** Device or resource busy. */
    public static final int EBUSY = 16;
    /** No such device. */
    public static final int ENODEV = 19;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** Function not implemented. */
    public static final int ENOSYS = 38;
    /** No data available. */
    public static final int ENODATA = 61;
    /** Operation not supported. */
    public static final int EOPNOTSUPP = 95;
    /** Connection reset by peer. */
    public static final int ECONNRESET = 104;
    /** Connection timed out. */
    public static final int ETIMEDOUT = 110;
    /** Connection refused. */
    public static final int ECONNREFUSED = 111;

    private static final String[] NAMES = {
        "", "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF",
        "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV",
        "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG",
        "ENOSPC", "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE", "EDEADLK",
        "ENAMETOOLONG", "ENOLCK", "ENOSYS", "ENOTEMPTY", "ELOOP", "", "ENOMSG", "EIDRM", "ECHRNG",
        "EL2NSYNC", "EL3HLT", "EL3RST", "ELNRNG", "EUNATCH", "ENOCSI", "EL2HLT", "EBADE", "EBADR",
        "EXFULL", "ENOANO", "EBADRQC", "EBADSLT", "", "EBFONT", "ENOSTR", "ENODATA", "ETIME",
        "ENOSR", "ENONET", "ENOPKG", "EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM", "EPROTO",
        "EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD", "EREMCHG", "ELIBACC",
        "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC", "EILSEQ", "ERESTART", "ESTRPIPE", "EUSERS",
        "ENOTSOCK", "EDESTADDRREQ", "EMSGSIZE", "EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT",
        "ESOCKTNOSUPPORT", "EOPNOTSUPP", "EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE",
        "EADDRNOTAVAIL", "ENETDOWN", "ENETUNREACH", "ENETRESET", "ECONNABORTED", "ECONNRESET",
        "ENOBUFS", "EISCONN", "ENOTCONN", "ESHUTDOWN", "ETOOMANYREFS", "ETIMEDOUT", "ECONNREFUSED",
        "EHOSTDOWN", "EHOSTUNREACH", "EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN", "ENOTNAM",
        "ENAVAIL", "EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE", "ECANCELED",
        "ENOKEY", "EKEYEXPIRED", "EKEYREVOKED", "EKEYREJECTED", "EOWNERDEAD", "ENOTRECOVERABLE",
        "ERFKILL", ""
    };

    private static final String[] MESSAGES = {
        "", "Operation not permitted", "No such file or directory", "No such process",
        "Interrupted system call", "Input/output error", "No such device or address",
        "Argument list too long", "Exec format error", "Bad file descriptor", "No child processes",
        "Resource temporarily unavailable", "Cannot allocate memory", "Permission denied",
        "Bad address", "Block device required", "Device or resource busy", "File exists",
        "Invalid cross-device link", "No such device", "Not a directory", "Is a directory",
        "Invalid argument", "Too many open files in system", "Too many open files",
        "Inappropriate ioctl for device", "Text file busy", "File too large",
        "No space left on device", "Illegal seek", "Read-only file system", "Too many links",
        "Broken pipe", "Numerical argument out of domain", "Numerical result out of range",
        "Resource deadlock avoided", "File name too long", "No locks available",
        "Function not implemented", "Directory not empty", "Too many levels of symbolic links", "",
        "No message of desired type", "Identifier removed", "Channel number out of range",
        "Level 2 not synchronized", "Level 3 halted", "Level 3 reset", "Link number out of range",
        "Protocol driver not attached", "No CSI structure available", "Level 2 halted",
        "Invalid exchange", "Invalid request descriptor", "Exchange full", "No anode",
        "Invalid request code", "Invalid slot", "", "Bad font file format", "Device not a stream",
        "No data available", "Timer expired", "Out of streams resources",
        "Machine is not on the network", "Package not installed", "Object is remote",
        "Link has been severed", "Advertise error", "Srmount error", "Communication error on send",
        "Protocol error", "Multihop attempted", "RFS specific error", "Bad message",
        "Value too large for defined data type", "Name not unique on network",
        "File descriptor in bad state", "Remote address changed",
        "Can not access a needed shared library", "Accessing a corrupted shared library",
        ".lib section in a.out corrupted", "Attempting to link in too many shared libraries",
        "Cannot exec a shared library directly",
        "Invalid or incomplete multibyte or wide character",
        "Interrupted system call should be restarted", "Streams pipe error", "Too many users",
        "Socket operation on non-socket", "Destination address required", "Message too long",
        "Protocol wrong type for socket", "Protocol not available", "Protocol not supported",
        "Socket type not supported", "Operation not supported", "Protocol family not supported",
        "Address family not supported by protocol", "Address already in use",
        "Cannot assign requested address", "Network is down", "Network is unreachable",
        "Network dropped connection on reset", "Software caused connection abort",
        "Connection reset by peer", "No buffer space available",
        "Transport endpoint is already connected", "Transport endpoint is not connected",
        "Cannot send after transport endpoint shutdown", "Too many references: cannot splice",
        "Connection timed out", "Connection refused", "Host is down", "No route to host",
        "Operation already in progress", "Operation now in progress", "Stale file handle",
        "Structure needs cleaning", "Not a XENIX named type file", "No XENIX semaphores available",
        "Is a named type file", "Remote I/O error", "Disk quota exceeded", "No medium found",
        "Wrong medium type", "Operation canceled", "Required key not available", "Key has expired",
        "Key has been revoked", "Key was rejected by service", "Owner died",
        "State not recoverable", "Operation not possible due to RF-kill", ""
    };

    private Errno() {
    }

    /** The symbolic name of {@code errno} ({@code "ENODEV"}), or {@code "errno N"} when unknown. */
    public static String name(int errno) {
        return errno > 0 && errno < NAMES.length && !NAMES[errno].isEmpty() ? NAMES[errno] : "errno " + errno;
    }

    /** The C library's message for {@code errno}, as {@code strerror(3)} gives it. */
    public static String message(int errno) {
        return errno > 0 && errno < MESSAGES.length && !MESSAGES[errno].isEmpty()
                ? MESSAGES[errno] : "Unknown error " + errno;
    }
}
