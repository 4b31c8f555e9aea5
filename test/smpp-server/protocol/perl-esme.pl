#!/usr/bin/perl
# A customer ESME on Net::SMPP (Debian libnet-smpp-perl), a third-party SMPP 3.4 client for the
# smsgate SMPP server: binds as a transceiver, submits one message, waits for one deliver_sm,
# answers it, unbinds and exits.
#
# Usage: perl-esme.pl --port N --system-id ID --password PW --destination ADDR --short-message-hex HEX
#                     [--esm-class N] [--data-coding N] [--max-runtime-s N] [--parent-pid PID]
# Output: one JSON object per line on stdout:
#   {"event":"bound","status":N,"system_id":S}
#   {"event":"submit_sm_resp","status":N,"message_id":S}
#   {"event":"deliver_sm","esm_class":N,"data_coding":N,"short_message":HEX,"receipted_message_id":S,"message_state":N}
#   {"event":"unbound","status":N}
# Lifetime: exits after --max-runtime-s (default 60) or once its parent is gone.
use strict;
use warnings;
use Getopt::Long;
use JSON::PP;
use Net::SMPP;

my %opt = ('esm-class' => 0, 'data-coding' => 0, 'max-runtime-s' => 60);
GetOptions(\%opt, 'port=i', 'system-id=s', 'password=s', 'destination=s', 'short-message-hex=s', 'esm-class=i',
           'data-coding=i', 'max-runtime-s=i', 'parent-pid=i')
    or die "bad arguments\n";
my $parent = $opt{'parent-pid'} // getppid();
$SIG{ALRM} = sub { die "max runtime reached\n" };
alarm $opt{'max-runtime-s'};

$| = 1;
my $json = JSON::PP->new->canonical;
sub out { print $json->encode($_[0]), "\n" }
sub cstring { my ($value) = @_; return undef if !defined $value; $value =~ s/\0+$//; return $value }

# SMPP 3.4 section 5.1.2 command ids read here.
use constant { CMD_DELIVER_SM => 0x00000005, CMD_ENQUIRE_LINK => 0x00000015 };

my ($smpp, $bind) = Net::SMPP->new_transceiver('127.0.0.1', port => $opt{port}, system_id => $opt{'system-id'},
    password => $opt{password}, system_type => 'perl', smpp_version => 0x34, interface_version => 0x34)
    or die "cannot connect: $!\n";
out({ event => 'bound', status => $bind->{status}, system_id => cstring($bind->{system_id}) });
exit 1 if $bind->{status} != 0;

my $resp = $smpp->submit_sm(source_addr_ton => 5, source_addr => 'PerlCo', dest_addr_ton => 1, dest_addr_npi => 1,
    destination_addr => $opt{destination}, esm_class => $opt{'esm-class'}, data_coding => $opt{'data-coding'},
    registered_delivery => 1, short_message => pack('H*', $opt{'short-message-hex'}))
    or die "no submit_sm_resp\n";
out({ event => 'submit_sm_resp', status => $resp->{status}, message_id => cstring($resp->{message_id}) });

while (1) {
    die "parent gone\n" if getppid() != $parent;
    my $pdu = $smpp->read_pdu() or die "connection lost\n";
    if ($pdu->{cmd} == CMD_ENQUIRE_LINK) {
        $smpp->enquire_link_resp(seq => $pdu->{seq});
        next;
    }
    next if $pdu->{cmd} != CMD_DELIVER_SM;
    out({ event => 'deliver_sm', esm_class => $pdu->{esm_class}, data_coding => $pdu->{data_coding},
          short_message => unpack('H*', $pdu->{short_message}), receipted_message_id => cstring($pdu->{receipted_message_id}),
          message_state => defined $pdu->{message_state} ? unpack('C', $pdu->{message_state}) : undef });
    $smpp->deliver_sm_resp(seq => $pdu->{seq}, message_id => '');
    last;
}
my $unbind = $smpp->unbind() or die "no unbind_resp\n";
out({ event => 'unbound', status => $unbind->{status} });
