#!/usr/bin/perl
# A small SMSC on Net::SMPP (Debian libnet-smpp-perl): a third-party SMPP 3.4 implementation to
# run smsgate's SmppTransport against, so the transport is not only tested against peers built on
# the same `smpp` npm package it uses itself.
#
# Usage: smsc.pl [--port N] [--system-id ID] [--password PW] [--id-format decimal|hex]
#                [--receipt text|tlv|none] [--receipt-esm-class N] [--max-runtime-s N] [--parent-pid PID]
#   --port 0 (default) takes a free port. Listens on 127.0.0.1.
#
# Behaviour (SMPP 3.4 section numbers):
#   bind_transceiver / bind_transmitter / bind_receiver (4.1): accepted when system_id and password
#     match, else ESME_RINVPASWD (0x0E) and the connection is closed.
#   submit_sm (4.4): submit_sm_resp with a new message id (decimal, or upper-case hex), then a
#     deliver_sm receipt (4.6, esm_class 0x04, Appendix B text) to a receiving session, with the
#     receipted_message_id (5.3.2.12) and message_state (5.3.2.35) TLVs when --receipt tlv.
#     --receipt-esm-class 0 sends the receipt text as an ordinary message (esm_class 0), as some
#     SMSCs do.
#   enquire_link (4.11): enquire_link_resp.  unbind (4.2): unbind_resp, then close.
#   anything else: generic_nack ESME_RINVCMDID (0x03).
#   A mobile-originated message is sent when a JSON line arrives on stdin:
#     {"deliver_sm":{"source_addr","destination_addr","esm_class","data_coding","short_message":"<hex>",
#                    "sar":[ref,total,seqnum],"message_payload":"<hex>"}}
#   as a deliver_sm (4.6.1) to a receiving session, with the SAR TLVs (5.3.2.22-24) and
#   message_payload (5.3.2.32) when given; logged as {"event":"mo","seq":N}.
# Lifetime: exits by itself after --max-runtime-s seconds (default 600) or as soon as the process
#   that started it is gone (its parent pid is no longer --parent-pid, default the parent it
#   started with: it was re-parented), so a test run that dies cannot leave it running.
# Output: one JSON object per line on stdout: {"event":"listening","port":N} first, then one line
#   per PDU received (submit_sm with short_message in hex, esm_class, data_coding and TLVs by tag)
#   and per receipt sent.
use strict;
use warnings;
use Getopt::Long;
use IO::Select;
use JSON::PP;
use POSIX qw(strftime);
use Net::SMPP;

my %opt = (port => 0, 'system-id' => 'esme', password => 'secret', 'id-format' => 'decimal', receipt => 'text',
           'receipt-esm-class' => 0x04, 'max-runtime-s' => 600);
GetOptions(\%opt, 'port=i', 'system-id=s', 'password=s', 'id-format=s', 'receipt=s', 'receipt-esm-class=i', 'max-runtime-s=i',
           'parent-pid=i')
    or die "bad arguments\n";
# Given by the spawner, so a parent that dies before this line runs is still noticed.
my $parent = $opt{'parent-pid'} // getppid();
my $deadline = time + $opt{'max-runtime-s'};

# SMPP 3.4 section 5.1.2 command ids this SMSC answers, and 5.1.3 statuses it sends.
use constant {
    CMD_BIND_RECEIVER => 0x00000001, CMD_BIND_TRANSMITTER => 0x00000002, CMD_SUBMIT_SM => 0x00000004,
    CMD_DELIVER_SM_RESP => 0x80000005, CMD_UNBIND => 0x00000006, CMD_BIND_TRANSCEIVER => 0x00000009,
    CMD_ENQUIRE_LINK => 0x00000015, CMD_GENERIC_NACK => 0x80000000,
    ESME_RINVCMDID => 0x00000003, ESME_RINVPASWD => 0x0000000E,
    MESSAGE_STATE_DELIVERED => 2,
};
my %BIND_RESP = (
    CMD_BIND_RECEIVER() => 'bind_receiver_resp',
    CMD_BIND_TRANSMITTER() => 'bind_transmitter_resp',
    CMD_BIND_TRANSCEIVER() => 'bind_transceiver_resp',
);

$| = 1;
my $json = JSON::PP->new->canonical;
sub out { print $json->encode($_[0]), "\n" }

my $listener = Net::SMPP->new_listen('127.0.0.1', port => $opt{port}, smpp_version => 0x34, enquire_interval => 0)
    or die "cannot listen: $!\n";
out({ event => 'listening', port => $listener->sockport });

my $select = IO::Select->new($listener, \*STDIN);
my %bound;      # socket => bind command id
my $next_id = 4_000_000_000;

sub close_session {
    my ($session) = @_;
    delete $bound{$session};
    $select->remove($session);
    close $session;
}

sub receiving_session {
    for my $session ($select->handles) {
        my $cmd = $bound{$session} // next;
        return $session if $cmd == CMD_BIND_TRANSCEIVER || $cmd == CMD_BIND_RECEIVER;
    }
    return undef;
}

sub tlvs_of {
    my ($pdu) = @_;
    # Net::SMPP keeps every TLV's raw value under its numeric tag.
    return { map { sprintf('0x%04X', $_) => unpack('H*', $pdu->{$_}) } grep { /^\d+$/ } keys %$pdu };
}

sub send_receipt {
    my ($submit, $message_id) = @_;
    my $session = receiving_session() // return;
    my $stamp = strftime('%y%m%d%H%M', gmtime);
    my $text = "id:$message_id sub:001 dlvrd:001 submit date:$stamp done date:$stamp stat:DELIVRD err:000 text:"
        . substr($submit->{short_message} =~ s/[^\x20-\x7E]/./gr, 0, 20);
    my @tlvs = $opt{receipt} eq 'tlv'
        ? (receipted_message_id => "$message_id\0", message_state => chr(MESSAGE_STATE_DELIVERED))
        : ();
    my $seq = $session->deliver_sm(
        source_addr_ton => $submit->{dest_addr_ton}, source_addr_npi => $submit->{dest_addr_npi},
        source_addr => $submit->{destination_addr},
        dest_addr_ton => $submit->{source_addr_ton}, dest_addr_npi => $submit->{source_addr_npi},
        destination_addr => $submit->{source_addr},
        esm_class => $opt{'receipt-esm-class'}, data_coding => 0, short_message => $text,
        @tlvs, async => 1,
    );
    out({ event => 'receipt', seq => $seq, message_id => $message_id, text => $text });
}

sub send_mo {
    my ($mo) = @_;
    my $session = receiving_session();
    if (!$session) { out({ event => 'mo_refused', reason => 'no receiving session' }); return; }
    my @tlvs;
    if ($mo->{sar}) {
        my ($ref, $total, $seqnum) = @{ $mo->{sar} };
        push @tlvs, sar_msg_ref_num => pack('n', $ref), sar_total_segments => chr($total), sar_segment_seqnum => chr($seqnum);
    }
    push @tlvs, message_payload => pack('H*', $mo->{message_payload}) if defined $mo->{message_payload};
    my $seq = $session->deliver_sm(
        source_addr_ton => 1, source_addr_npi => 1, source_addr => $mo->{source_addr},
        dest_addr_ton => 1, dest_addr_npi => 1, destination_addr => $mo->{destination_addr},
        esm_class => $mo->{esm_class} // 0, data_coding => $mo->{data_coding} // 0,
        short_message => pack('H*', $mo->{short_message} // ''),
        @tlvs, async => 1,
    );
    out({ event => 'mo', seq => $seq });
}

my $stdin_buffer = '';
sub on_stdin {
    my $n = sysread(STDIN, $stdin_buffer, 65536, length $stdin_buffer);
    if (!$n) { $select->remove(\*STDIN); return; }
    while ($stdin_buffer =~ s/^([^\n]*)\n//) {
        my $command = $json->decode($1);
        send_mo($command->{deliver_sm}) if $command->{deliver_sm};
    }
}

sub on_pdu {
    my ($session, $pdu) = @_;
    my $cmd = $pdu->{cmd};
    if ($BIND_RESP{$cmd}) {
        my $ok = $pdu->{system_id} eq $opt{'system-id'} && $pdu->{password} eq $opt{password};
        out({ event => 'bind', command => $BIND_RESP{$cmd} =~ s/_resp$//r, system_id => $pdu->{system_id},
              system_type => $pdu->{system_type}, interface_version => $pdu->{interface_version}, accepted => $ok ? JSON::PP::true : JSON::PP::false });
        my $respond = $BIND_RESP{$cmd};
        if (!$ok) {
            $session->$respond(seq => $pdu->{seq}, status => ESME_RINVPASWD, system_id => 'PerlSMSC');
            close_session($session);
            return;
        }
        $session->$respond(seq => $pdu->{seq}, system_id => 'PerlSMSC');
        $bound{$session} = $cmd;
    } elsif ($cmd == CMD_SUBMIT_SM) {
        my $number = $next_id++;
        my $message_id = $opt{'id-format'} eq 'hex' ? sprintf('%X', $number) : "$number";
        out({ event => 'submit_sm', seq => $pdu->{seq}, message_id => $message_id,
              source_addr => $pdu->{source_addr}, source_addr_ton => $pdu->{source_addr_ton}, source_addr_npi => $pdu->{source_addr_npi},
              destination_addr => $pdu->{destination_addr}, dest_addr_ton => $pdu->{dest_addr_ton}, dest_addr_npi => $pdu->{dest_addr_npi},
              esm_class => $pdu->{esm_class}, data_coding => $pdu->{data_coding}, registered_delivery => $pdu->{registered_delivery},
              short_message => unpack('H*', $pdu->{short_message}), tlvs => tlvs_of($pdu) });
        $session->submit_sm_resp(seq => $pdu->{seq}, message_id => $message_id);
        send_receipt($pdu, $message_id) if $opt{receipt} ne 'none';
    } elsif ($cmd == CMD_ENQUIRE_LINK) {
        out({ event => 'enquire_link', seq => $pdu->{seq} });
        $session->enquire_link_resp(seq => $pdu->{seq});
    } elsif ($cmd == CMD_UNBIND) {
        out({ event => 'unbind', seq => $pdu->{seq} });
        $session->unbind_resp(seq => $pdu->{seq});
        close_session($session);
    } elsif ($cmd == CMD_DELIVER_SM_RESP) {
        out({ event => 'deliver_sm_resp', seq => $pdu->{seq}, status => $pdu->{status} });
    } elsif ($cmd & CMD_GENERIC_NACK) {
        out({ event => 'response', command_id => sprintf('0x%08X', $cmd), seq => $pdu->{seq}, status => $pdu->{status} });
    } else {
        out({ event => 'unknown', command_id => sprintf('0x%08X', $cmd), seq => $pdu->{seq} });
        $session->generic_nack(seq => $pdu->{seq}, status => ESME_RINVCMDID);
    }
}

$SIG{TERM} = sub { exit 0 };
$SIG{PIPE} = 'IGNORE';
while (1) {
    if (getppid() != $parent) { out({ event => 'exit', reason => 'parent gone' }); exit 0 }
    if (time >= $deadline) { out({ event => 'exit', reason => 'max runtime' }); exit 0 }
    # Wake at least once a second to check the two conditions above.
    for my $ready ($select->can_read(1)) {
        if ($ready == \*STDIN) {
            on_stdin();
            next;
        }
        if ($ready == $listener) {
            my $session = $listener->accept or next;
            $select->add($session);
            out({ event => 'connected' });
            next;
        }
        my $pdu = $ready->read_pdu;
        if (!defined $pdu) {
            out({ event => 'closed' });
            close_session($ready);
            next;
        }
        on_pdu($ready, $pdu);
    }
}
