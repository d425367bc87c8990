function info = flexfmu_fmu_info(fmu)
%FLEXFMU_FMU_INFO What flexfmu_import needs to know about a flexfmu FMU.
%   info = flexfmu_fmu_info('arm.fmu') reads the FMU's modelDescription.xml
%   (FMI 2.0 or 3.0) and returns a struct with the fields
%     fmi_version       '2.0' or '3.0'
%     model_name        the arm's name
%     model_identifier  the name of the FMU's binary
%     interfaces        cell of 'CoSimulation' and/or 'ModelExchange'
%     step_size         DefaultExperiment stepSize: the communication step
%                       the FMU was exported for (s)
%     internal_step     the fixed internal step (s); communication steps must
%                       be whole multiples of it
%     parameters        names of the parameters (cell, in file order)
%     parameter_start   their start values (column vector)
%   The XML is read with regular expressions, so this runs in MATLAB and in
%   GNU Octave (which needs the unzip program) without Java.
if ~ischar(fmu) || exist(fmu, 'file') ~= 2
    error('flexfmu_fmu_info:file', 'no FMU file ''%s''', char(fmu));
end
folder = tempname();
mkdir(folder);
try
    unzip(fmu, folder);
    xml = fileread(fullfile(folder, 'modelDescription.xml'));
catch failure
    remove_folder(folder);
    error('flexfmu_fmu_info:read', 'cannot read modelDescription.xml from ''%s'': %s', fmu, failure.message);
end
remove_folder(folder);

root = regexp(xml, '<fmiModelDescription\s[^>]*>', 'match', 'once');
info.fmi_version = attribute(root, 'fmiVersion');
info.model_name = attribute(root, 'modelName');
info.interfaces = {};
info.model_identifier = '';
for kind = {'CoSimulation', 'ModelExchange'}
    element = regexp(xml, ['<' kind{1} '\s[^>]*>'], 'match', 'once');
    if ~isempty(element) && ~isempty(attribute(element, 'modelIdentifier'))
        info.interfaces{end + 1} = kind{1};
        info.model_identifier = attribute(element, 'modelIdentifier');
    end
end
info.step_size = str2double(attribute(regexp(xml, '<DefaultExperiment\s[^>]*>', 'match', 'once'), 'stepSize'));
step = regexp(xml, 'fixedInternalStepSize="([^"]*)"', 'tokens', 'once');
if isempty(step)
    step = regexp(xml, 'internalStep="([^"]*)"', 'tokens', 'once');
end
info.internal_step = str2double(step{1});
info.parameters = {};
info.parameter_start = zeros(0, 1);
for element = regexp(xml, '<(ScalarVariable|Float64)\s[^>]*>', 'match')
    if strcmp(attribute(element{1}, 'causality'), 'parameter')
        info.parameters{end + 1, 1} = attribute(element{1}, 'name');
        start = attribute(element{1}, 'start');
        if isempty(start)  % FMI 2.0 keeps the start value in the <Real> element that follows
            after = xml(strfind(xml, element{1}) + numel(element{1}):end);
            start = attribute(regexp(after, '<Real\s[^>]*>', 'match', 'once'), 'start');
        end
        info.parameter_start(end + 1, 1) = str2double(start);
    end
end
end

function value = attribute(element, name)
% The value of the XML attribute NAME in the start tag ELEMENT ('' if absent), unescaped.
token = regexp(element, ['\s' name '="([^"]*)"'], 'tokens', 'once');
value = '';
if ~isempty(token)
    value = strrep(strrep(strrep(strrep(strrep(token{1}, '&quot;', '"'), '&apos;', ''''), '&lt;', '<'), ...
        '&gt;', '>'), '&amp;', '&');
end
end

function remove_folder(folder)
% Deletes the unpacked FMU (without Octave's question whether to delete a folder with its content).
if exist('OCTAVE_VERSION', 'builtin') ~= 0
    confirm_recursive_rmdir(false, 'local');
end
rmdir(folder, 's');
end
