#!/usr/bin/perl
# A customer ESME on Net::SMPP (Debian libnet-smpp-perl): a third-party SMPP 3.4 client to run
# smsgate's SMPP server against, so the server is not only tested with peers built on the same
# `smpp` npm package it uses itself. One process is one session: it binds once, and the tests
# start another process to bind again.
#
# Usage: esme.pl --host H --port N --bind transmitter|receiver|transceiver --system-id ID --password PW
#                [--system-type T] [--deliver-status N] [--max-runtime-s N] [--parent-pid PID]
#
# Behaviour (SMPP 3.4 section numbers):
#   Connects and sends bind_transmitter / bind_receiver / bind_transceiver (4.1); logs
#     {"event":"bind_resp","command":"bind_transceiver","status":N,"system_id":"..."}.
#   Commands, one JSON object a line on stdin:
#     {"submit_sm":{"ref":"...","source_addr","source_addr_ton","source_addr_npi","destination_addr",
#                   "dest_addr_ton","dest_addr_npi","esm_class","data_coding","registered_delivery",
#                   "short_message":"<hex>","sar":[ref,total,seqnum],"message_payload":"<hex>"}}
#       sends a submit_sm (4.4.1) with the SAR TLVs (5.3.2.22-24) and message_payload (5.3.2.32)
#       when given; the short_message octets go as given (a UDH included when esm_class has 0x40);
#       logs {"event":"submit_sm","ref","seq"}, then {"event":"submit_sm_resp","ref","seq","status","message_id"}.
#     {"deliver_status":N}  answers the deliver_sm that follow with command_status N (0 acknowledges;
#       non-zero makes the server send them again later).
#     {"unbind":true}  sends unbind (4.2); logs {"event":"unbind_resp","status"} and exits.
#   deliver_sm (4.6.1): answered deliver_sm_resp with the current status; logged as
#     {"event":"deliver_sm","seq","answered","esm_class","data_coding","source_addr","destination_addr",
#      "short_message":"<hex>","tlvs":{"0x001E":"<hex>",...}}.
#   enquire_link (4.11): enquire_link_resp.  unbind from the server: unbind_resp, then exit.
#   generic_nack and other responses: logged as {"event":"response","command_id","seq","status"}.
#   The connection closed by the server: {"event":"closed"}, then exit.
# Lifetime: exits by itself after --max-runtime-s seconds (default 600) or as soon as the process
#   that started it is gone (its parent pid is no longer --parent-pid), so a test run that dies
#   cannot leave it running.
use strict;
use warnings;
use Getopt::Long;
use IO::Select;
use JSON::PP;
use Net::SMPP;

my %opt = (bind => 'transceiver', 'system-type' => '', 'deliver-status' => 0, 'max-runtime-s' => 600);
GetOptions(\%opt, 'host=s', 'port=i', 'bind=s', 'system-id=s', 'password=s', 'system-type=s', 'deliver-status=i',
           'max-runtime-s=i', 'parent-pid=i')
    or die "bad arguments\n";
for my $required ('host', 'port', 'system-id', 'password') {
    die "--$required is required\n" if !defined $opt{$required};
}
die "--bind must be transmitter, receiver or transceiver\n" if $opt{bind} !~ /^(transmitter|receiver|transceiver)$/;
my $parent = $opt{'parent-pid'} // getppid();
my $deadline = time + $opt{'max-runtime-s'};
my $deliver_status = $opt{'deliver-status'};

# SMPP 3.4 section 5.1.2 command ids this ESME handles.
use constant {
    CMD_SUBMIT_SM_RESP => 0x80000004, CMD_DELIVER_SM => 0x00000005, CMD_UNBIND => 0x00000006,
    CMD_UNBIND_RESP => 0x80000006, CMD_ENQUIRE_LINK => 0x00000015, CMD_ENQUIRE_LINK_RESP => 0x80000015,
    CMD_GENERIC_NACK => 0x80000000,
};
my %BIND_RESP = (transmitter => 0x80000002, receiver => 0x80000001, transceiver => 0x80000009);

$| = 1;
my $json = JSON::PP->new->canonical;
sub out { print $json->encode($_[0]), "\n" }

$SIG{TERM} = sub { exit 0 };
$SIG{PIPE} = 'IGNORE';

my $smpp = Net::SMPP->new_connect($opt{host}, port => $opt{port}, smpp_version => 0x34, async => 1, enquire_interval => 0);
if (!$smpp) {
    out({ event => 'connect_failed', reason => "$!" });
    exit 1;
}
my $bind = "bind_$opt{bind}";
my $bind_seq = $smpp->$bind(system_id => $opt{'system-id'}, password => $opt{password}, system_type => $opt{'system-type'});
out({ event => 'connected', bind_seq => $bind_seq });

my %submit_ref;   # seq => the test's ref for that submit_sm
my $select = IO::Select->new($smpp, \*STDIN);

sub tlvs_of {
    my ($pdu) = @_;
    # Net::SMPP keeps every TLV's raw value under its numeric tag.
    return { map { sprintf('0x%04X', $_) => unpack('H*', $pdu->{$_}) } grep { /^\d+$/ } keys %$pdu };
}

sub submit {
    my ($sm) = @_;
    my @tlvs;
    if ($sm->{sar}) {
        my ($ref, $total, $seqnum) = @{ $sm->{sar} };
        push @tlvs, sar_msg_ref_num => pack('n', $ref), sar_total_segments => chr($total), sar_segment_seqnum => chr($seqnum);
    }
    push @tlvs, message_payload => pack('H*', $sm->{message_payload}) if defined $sm->{message_payload};
    my $seq = $smpp->submit_sm(
        source_addr_ton => $sm->{source_addr_ton} // 5, source_addr_npi => $sm->{source_addr_npi} // 0,
        source_addr => $sm->{source_addr} // '',
        dest_addr_ton => $sm->{dest_addr_ton} // 1, dest_addr_npi => $sm->{dest_addr_npi} // 1,
        destination_addr => $sm->{destination_addr},
        esm_class => $sm->{esm_class} // 0, data_coding => $sm->{data_coding} // 0,
        registered_delivery => $sm->{registered_delivery} // 0,
        short_message => pack('H*', $sm->{short_message} // ''),
        @tlvs, async => 1,
    );
    $submit_ref{$seq} = $sm->{ref};
    out({ event => 'submit_sm', ref => $sm->{ref}, seq => $seq });
}

my $stdin_buffer = '';
sub on_stdin {
    my $n = sysread(STDIN, $stdin_buffer, 65536, length $stdin_buffer);
    if (!$n) { $select->remove(\*STDIN); return; }
    while ($stdin_buffer =~ s/^([^\n]*)\n//) {
        my $command = $json->decode($1);
        if ($command->{submit_sm}) { submit($command->{submit_sm}); }
        elsif (defined $command->{deliver_status}) {
            $deliver_status = $command->{deliver_status};
            out({ event => 'deliver_status', status => $deliver_status });
        }
        elsif ($command->{unbind}) { $smpp->unbind(async => 1); out({ event => 'unbind_sent' }); }
    }
}

sub on_pdu {
    my ($pdu) = @_;
    my $cmd = $pdu->{cmd};
    if (($cmd == $BIND_RESP{ $opt{bind} } || $cmd == CMD_GENERIC_NACK) && $pdu->{seq} == $bind_seq) {
        # A generic_nack to the bind (SMPP 3.4 section 4.3) is its answer too: reported with its status.
        out({ event => 'bind_resp', command => $cmd == CMD_GENERIC_NACK ? 'generic_nack' : $bind, status => $pdu->{status},
              system_id => $pdu->{system_id} // '' });
    } elsif ($cmd == CMD_SUBMIT_SM_RESP) {
        out({ event => 'submit_sm_resp', ref => delete $submit_ref{ $pdu->{seq} }, seq => $pdu->{seq}, status => $pdu->{status},
              message_id => $pdu->{message_id} // '' });
    } elsif ($cmd == CMD_DELIVER_SM) {
        # Answered before it is logged: the log line says what the server was told.
        $smpp->deliver_sm_resp(seq => $pdu->{seq}, status => $deliver_status, message_id => '');
        out({ event => 'deliver_sm', seq => $pdu->{seq}, answered => $deliver_status, esm_class => $pdu->{esm_class},
              data_coding => $pdu->{data_coding}, source_addr => $pdu->{source_addr}, destination_addr => $pdu->{destination_addr},
              short_message => unpack('H*', $pdu->{short_message}), tlvs => tlvs_of($pdu) });
    } elsif ($cmd == CMD_ENQUIRE_LINK) {
        $smpp->enquire_link_resp(seq => $pdu->{seq});
        out({ event => 'enquire_link', seq => $pdu->{seq} });
    } elsif ($cmd == CMD_UNBIND) {
        $smpp->unbind_resp(seq => $pdu->{seq});
        out({ event => 'unbound_by_server', seq => $pdu->{seq} });
        exit 0;
    } elsif ($cmd == CMD_UNBIND_RESP) {
        out({ event => 'unbind_resp', status => $pdu->{status} });
        exit 0;
    } elsif ($cmd & CMD_GENERIC_NACK) {
        out({ event => 'response', command_id => sprintf('0x%08X', $cmd), seq => $pdu->{seq}, status => $pdu->{status} });
    } else {
        out({ event => 'unknown', command_id => sprintf('0x%08X', $cmd), seq => $pdu->{seq} });
    }
}

# Net::SMPP warns on TLV tags it has no name for; the log line carries them by number anyway.
$SIG{__WARN__} = sub { print STDERR @_ unless $_[0] =~ /^Unknown tag/ };

while (1) {
    if (getppid() != $parent) { out({ event => 'exit', reason => 'parent gone' }); exit 0 }
    if (time >= $deadline) { out({ event => 'exit', reason => 'max runtime' }); exit 0 }
    # Wake at least once a second to check the two conditions above.
    for my $ready ($select->can_read(1)) {
        if ($ready == \*STDIN) {
            on_stdin();
            next;
        }
        my $pdu = $smpp->read_pdu;
        if (!defined $pdu) {
            out({ event => 'closed' });
            exit 0;
        }
        on_pdu($pdu);
    }
}
