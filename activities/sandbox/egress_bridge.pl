# The egress bridge, the first program of a sandbox with SANDBOX_NETWORK=egress (see egress_proxy.py).
# The sandbox has a network namespace of its own, with nothing but its own loopback: for each PORT
# given, the bridge listens on that loopback and pipes every connection to SOCKET, a Unix socket of
# the service's proxy outside, which decides where it may go. Then it becomes the program
# (perl opens its sockets close-on-exec: the program does not inherit them).
#
# Perl with builtins only, since every sandboxed run pays its start: ~2 ms, where Python takes ~15.
# Usage: perl -e "$(cat egress_bridge.pl)" PORT SOCKET [PORT SOCKET ...] -- PROGRAM [ARGUMENT ...]
use strict;

my @routes;
push @routes, [shift @ARGV, shift @ARGV] while @ARGV && $ARGV[0] ne '--';
shift @ARGV;

my @listeners;
for my $route (@routes) {
    my ($port, $path) = @$route;
    socket(my $listener, 2, 1, 0) or die "egress bridge: socket: $!\n";  # AF_INET, SOCK_STREAM
    bind($listener, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) or die "egress bridge: port $port: $!\n";
    listen($listener, 64) or die "egress bridge: listen on $port: $!\n";
    push @listeners, [$listener, $path];
}

# The server is a grandchild: the program gets no child of ours to wait for. It ends with the
# sandbox: when the program (its first process) ends, the kernel ends every process of the namespace.
my $child = fork() // die "egress bridge: fork: $!\n";
if ($child == 0) {
    my $server = fork();
    exit 0 unless defined $server && $server == 0;  # without a server, connections are refused
    serve();
}
waitpid($child, 0);
exec { $ARGV[0] } @ARGV;
print STDERR "egress bridge: cannot run $ARGV[0]: $!\n";
exit 127;

sub serve {
    $SIG{TERM} = 'IGNORE';  # a stop's SIGTERM is for the program, which may need the network to save its work
    $SIG{CHLD} = 'IGNORE';  # each connection's process is reaped by the kernel
    open STDIN, '<', '/dev/null';
    open STDOUT, '>', '/dev/null';  # the run's output ends when the program's does
    open STDERR, '>', '/dev/null';
    my $waiting = '';
    vec($waiting, fileno($_->[0]), 1) = 1 for @listeners;
    while (1) {
        next unless select(my $ready = $waiting, undef, undef, undef) > 0;
        for my $listener (@listeners) {
            next unless vec($ready, fileno($listener->[0]), 1);
            accept(my $client, $listener->[0]) or next;
            my $pid = fork();
            if (defined $pid && $pid == 0) {
                pipe_to_proxy($client, $listener->[1]);
                exit 0;
            }
            close $client;
        }
    }
}

sub pipe_to_proxy {
    my ($client, $path) = @_;
    socket(my $proxy, 1, 1, 0) or return;  # AF_UNIX, SOCK_STREAM
    connect($proxy, pack('S Z*', 1, $path)) or return;
    my %peer = (fileno($client) => $proxy, fileno($proxy) => $client);
    my %open = (fileno($client) => $client, fileno($proxy) => $proxy);
    while (%open) {
        my $waiting = '';
        vec($waiting, $_, 1) = 1 for keys %open;
        next unless select(my $ready = $waiting, undef, undef, undef) > 0;
        for my $number (keys %open) {
            next unless vec($ready, $number, 1);
            my $read = sysread($open{$number}, my $data, 65536);
            if (!$read) {  # its end closed: tell the other side, keep the other direction going
                shutdown($peer{$number}, 1);
                delete $open{$number};
                next;
            }
            for (my $done = 0; $done < $read;) {
                my $written = syswrite($peer{$number}, $data, $read - $done, $done) or return;
                $done += $written;
            }
        }
    }
}
